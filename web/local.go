package web

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/weirstream/weir/actors"
)

// dumpWait bounds how long a poll waits for a job's actors to answer.
const dumpWait = 500 * time.Millisecond

// LocalSource shows the jobs running in this process.
type LocalSource struct {
	node string
	jobs func() []*actors.Job

	mu    sync.Mutex // serialises polls: rates keep the previous sample
	rates *Rates
}

// NewLocalSource shows the jobs jobs returns, running on the node named node.
func NewLocalSource(node string, jobs func() []*actors.Job) *LocalSource {
	return &LocalSource{node: node, jobs: jobs, rates: NewRates()}
}

// Jobs implements Source.
func (s *LocalSource) Jobs(context.Context) ([]JobSummary, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	out := []JobSummary{}
	for _, j := range s.jobs() {
		out = append(out, s.summary(j, now))
	}
	return out, nil
}

// Job implements Source.
func (s *LocalSource) Job(ctx context.Context, name string) (*JobDetail, error) {
	j := s.find(name)
	if j == nil {
		return nil, fmt.Errorf("job %q: %w", name, ErrNoJob)
	}
	return s.detail(ctx, j, nil, nil)
}

// PartDumps asks the nodes for their parts of a job (see ClusterSource):
// tasks, record counters and restores; a node that does not answer is left
// out.
type PartDumps func(ctx context.Context, job string, nodes []string) []actors.PartReport

// detail reads job j and builds its detail; held, when set, says which
// nodes hold a key group locally (otherwise this node, once a checkpoint
// completed); parts, when set, fills in the tasks on other nodes.
func (s *LocalSource) detail(ctx context.Context, j *actors.Job, held func(op string, g int) []string, parts PartDumps) (*JobDetail, error) {
	var dump *actors.JobDump
	select {
	case <-j.Gone():
	default:
		dctx, cancel := context.WithTimeout(ctx, dumpWait)
		d, err := j.Dump(dctx)
		cancel()
		if err == nil {
			dump = d
		}
	}
	placement := j.Placement()
	var reports []actors.PartReport
	if dump != nil && parts != nil {
		reports = fillRemoteTasks(ctx, dump, j.Plan.Name, placement, parts)
	}
	f := jobFacts{plan: j.Plan, dump: dump, parts: reports, checkpoints: j.Checkpoints(), supervision: j.Supervision(),
		restores: j.Restores(), events: j.Events(), stateBytes: j.TaskStateBytes(), placement: placement,
		defaultNode: s.node, held: held}
	if held == nil && len(f.checkpoints) > 0 {
		here := []string{s.node}
		f.held = func(string, int) []string { return here }
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Now()
	f.summary = s.summary(j, now)
	return buildDetail(f, s.rates, now), nil
}

// Nodes implements Source: this process is one node.
func (s *LocalSource) Nodes(context.Context) ([]Node, error) {
	n := Node{ID: s.node}
	for _, j := range s.jobs() {
		n.Jobs = append(n.Jobs, j.Plan.Name)
		n.Used += j.LocalTasks()
		if cps := j.Checkpoints(); len(cps) > 0 {
			for _, op := range j.Plan.Operators {
				if op.Keyed {
					n.Held = append(n.Held, HeldState{Job: j.Plan.Name, Operator: op.Name,
						Checkpoint: cps[len(cps)-1].ID, KeyGroups: [][2]int{{0, j.Plan.MaxParallelism - 1}}})
				}
			}
		}
	}
	n.Slots = n.Used
	return []Node{n}, nil
}

// find returns the job named name, or nil.
func (s *LocalSource) find(name string) *actors.Job {
	for _, j := range s.jobs() {
		if j.Plan.Name == name {
			return j
		}
	}
	return nil
}

// summary is job j's line in the list; s.mu is held.
func (s *LocalSource) summary(j *actors.Job, now time.Time) JobSummary {
	in, out := j.Metrics.RecordsIn.Load(), j.Metrics.RecordsOut.Load()
	sum := JobSummary{Name: j.Plan.Name, State: jobState(j), Coordinator: s.node, RecordsIn: in, RecordsOut: out,
		InPerS: s.rates.Rate(j.Plan.Name+"/in", in, now), OutPerS: s.rates.Rate(j.Plan.Name+"/out", out, now),
		Restarts: j.Supervision().Restarts, Checkpoints: len(j.Checkpoints())}
	if sum.State == "failed" {
		sum.Error = j.Err().Error()
	}
	return sum
}

// jobState is running, finished or failed.
func jobState(j *actors.Job) string {
	select {
	case <-j.Done():
		if j.Err() != nil {
			return "failed"
		}
		return "finished"
	default:
		return "running"
	}
}

// fillRemoteTasks replaces the dump's tasks on other nodes with what those
// nodes report of them, and returns their reports.
func fillRemoteTasks(ctx context.Context, dump *actors.JobDump, job string, placement map[string]string, parts PartDumps) []actors.PartReport {
	nodes := map[string]bool{}
	for _, td := range dump.Tasks {
		if td.Phase == actors.PhaseRemote && placement[td.Task] != "" {
			nodes[placement[td.Task]] = true
		}
	}
	if len(nodes) == 0 {
		return nil
	}
	ask := make([]string, 0, len(nodes))
	for n := range nodes {
		ask = append(ask, n)
	}
	reports := parts(ctx, job, ask)
	got := map[string]actors.TaskDump{}
	for _, r := range reports {
		for _, td := range r.Tasks {
			got[td.Task] = td
		}
	}
	for i, td := range dump.Tasks {
		if r, ok := got[td.Task]; ok && td.Phase == actors.PhaseRemote {
			dump.Tasks[i] = r
		}
	}
	return reports
}
