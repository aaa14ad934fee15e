package web

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/weirstream/weir/actors"
)

// statusMaxAge is how long a fetched cluster status serves polls: one page
// poll reads the job list, a job and the nodes from one fetch.
const statusMaxAge = 700 * time.Millisecond

// ClusterStatus is a cluster's status as `node status --json` reads it:
// every node's answer and the job registry.
type ClusterStatus struct {
	Nodes []Node
	Jobs  []ClusterJob
}

// ClusterJob is one job of the registry with what its coordinator reported.
type ClusterJob struct {
	JobSummary
	Tasks       map[string]string // task → node
	Checkpoints []Checkpoint      // the latest few
}

// ClusterSource shows a cluster: its nodes and jobs from the status, and
// the full detail (graph, rates, key groups) of the jobs this node
// coordinates, with the counters of their tasks on other nodes as those
// nodes report them; a job coordinated elsewhere shows what its
// coordinator reports in the status (tasks, latest checkpoints, restarts).
type ClusterSource struct {
	status func(ctx context.Context) (*ClusterStatus, error)
	local  *LocalSource
	parts  PartDumps

	mu      sync.Mutex
	last    *ClusterStatus
	fetched time.Time
}

// NewClusterSource shows the cluster whose status status fetches, with the
// jobs coordinated returns in detail, their tasks on other nodes as parts
// reports them; node is this node's id.
func NewClusterSource(node string, status func(ctx context.Context) (*ClusterStatus, error), coordinated func() []*actors.Job, parts PartDumps) *ClusterSource {
	return &ClusterSource{status: status, local: NewLocalSource(node, coordinated), parts: parts}
}

// read returns the status, fetching it when the last one is too old.
func (s *ClusterSource) read(ctx context.Context) (*ClusterStatus, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.last != nil && time.Since(s.fetched) < statusMaxAge {
		return s.last, nil
	}
	st, err := s.status(ctx)
	if err != nil {
		return nil, fmt.Errorf("cluster status: %w", err)
	}
	s.last, s.fetched = st, time.Now()
	return st, nil
}

// Jobs implements Source: the registry's jobs, with rates for those this
// node coordinates.
func (s *ClusterSource) Jobs(ctx context.Context) ([]JobSummary, error) {
	st, err := s.read(ctx)
	if err != nil {
		return nil, err
	}
	local, err := s.local.Jobs(ctx)
	if err != nil {
		return nil, err
	}
	here := map[string]JobSummary{}
	for _, j := range local {
		here[j.Name] = j
	}
	out := []JobSummary{}
	for _, j := range st.Jobs {
		sum := j.JobSummary
		if l, ok := here[j.Name]; ok && sum.State == "running" {
			sum.RecordsIn, sum.RecordsOut, sum.InPerS, sum.OutPerS = l.RecordsIn, l.RecordsOut, l.InPerS, l.OutPerS
			sum.Checkpoints = l.Checkpoints
			s.addPartTotals(ctx, &sum)
		}
		out = append(out, sum)
	}
	return out, nil
}

// addPartTotals adds the records the job's parts on other nodes counted
// to the totals of sum, a job this node coordinates.
func (s *ClusterSource) addPartTotals(ctx context.Context, sum *JobSummary) {
	j := s.local.find(sum.Name)
	if j == nil || s.parts == nil {
		return
	}
	others := map[string]bool{}
	for _, n := range j.Placement() {
		if n != s.local.node {
			others[n] = true
		}
	}
	if len(others) == 0 {
		return
	}
	for _, r := range s.parts(ctx, sum.Name, slices.Sorted(maps.Keys(others))) {
		sum.RecordsIn += r.RecordsIn
		sum.RecordsOut += r.RecordsOut
	}
}

// Job implements Source.
func (s *ClusterSource) Job(ctx context.Context, name string) (*JobDetail, error) {
	st, err := s.read(ctx)
	if err != nil {
		return nil, err
	}
	var rec *ClusterJob
	for i := range st.Jobs {
		if st.Jobs[i].Name == name {
			rec = &st.Jobs[i]
		}
	}
	if j := s.local.find(name); j != nil {
		d, err := s.local.detail(ctx, j, heldBy(st.Nodes, name), s.parts)
		if err != nil {
			return nil, err
		}
		if rec != nil {
			d.State, d.Coordinator, d.Error = rec.State, rec.Coordinator, rec.Error
		}
		// The job's rates over all nodes: its sources' and sinks'.
		d.InPerS, d.OutPerS = 0, 0
		for _, o := range d.Operators {
			switch o.Kind {
			case "source":
				d.InPerS += o.InPerS
			case "sink":
				d.OutPerS += o.OutPerS
			}
		}
		return d, nil
	}
	if rec == nil {
		return nil, fmt.Errorf("job %q: %w", name, ErrNoJob)
	}
	return reportedDetail(*rec), nil
}

// Nodes implements Source.
func (s *ClusterSource) Nodes(ctx context.Context) ([]Node, error) {
	st, err := s.read(ctx)
	if err != nil {
		return nil, err
	}
	return st.Nodes, nil
}

// reportedDetail is the detail of a job coordinated on another node: what
// its coordinator reports in the status.
func reportedDetail(j ClusterJob) *JobDetail {
	d := &JobDetail{JobSummary: j.JobSummary, At: time.Now(), Operators: []Operator{}, Edges: []Edge{},
		Checkpoints: j.Checkpoints, KeyGroups: []KeyGroups{}, Timeline: []Event{},
		Failures: Failures{Restarts: j.Restarts, RecoveryMs: []float64{}, Causes: []Event{}}}
	if d.Checkpoints == nil {
		d.Checkpoints = []Checkpoint{}
	}
	for name, node := range j.Tasks {
		d.Tasks = append(d.Tasks, Task{Name: name, Node: node})
	}
	sort.Slice(d.Tasks, func(a, b int) bool { return d.Tasks[a].Name < d.Tasks[b].Name })
	return d
}

// heldBy answers which nodes hold key group g of job's operator locally,
// from the nodes' reported state.
func heldBy(nodes []Node, job string) func(op string, g int) []string {
	return func(op string, g int) []string {
		var on []string
		for _, n := range nodes {
			for _, h := range n.Held {
				if h.Job != job || h.Operator != op {
					continue
				}
				for _, r := range h.KeyGroups {
					if g >= r[0] && g <= r[1] {
						on = append(on, n.ID)
						break
					}
				}
			}
		}
		return dedupe(on)
	}
}

// dedupe drops repeats from a sorted-by-node list.
func dedupe(s []string) []string {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}
