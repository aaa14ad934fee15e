package node

import (
	"context"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/weirstream/weir/actors"
	"github.com/weirstream/weir/cluster"
	"github.com/weirstream/weir/transport"
)

// AliveNodes returns the latest heartbeat of every node this node sees
// alive, itself included: slots, jobs and the state each holds locally.
func (a *Agent) AliveNodes() []cluster.Heartbeat { return a.alive() }

// CoordinatedJobs returns the jobs this node coordinates now.
func (a *Agent) CoordinatedJobs() []*actors.Job {
	var out []*actors.Job
	for _, cj := range a.coordJobs() {
		if cj.job != nil {
			out = append(out, cj.job)
		}
	}
	return out
}

// partDumpWait bounds how long a node dumps its part of a job, and how long
// the asking node waits for the answers.
const partDumpWait = 500 * time.Millisecond

// PartDumpSubject is where node answers for its parts of jobs: the tasks'
// dumps (phase, records, outputs), for the web page of the job's
// coordinator.
func PartDumpSubject(node string) string { return transport.NodeSubject(node, "partdump") }

// partDumpRequest asks a node for its part of job Job.
type partDumpRequest struct {
	Job string `msgpack:"job"`
}

// onPartDump answers a partDumpRequest; a job with no part here answers no
// tasks.
func (a *Agent) onPartDump(m *nats.Msg) {
	var req partDumpRequest
	if err := Decode(m, &req); err != nil {
		a.counters.Malformed.Add(1)
		a.log.Warn().Err(err).Msg("bad part dump request: dropped")
		return
	}
	a.mu.Lock()
	j := a.parts[req.Job]
	a.mu.Unlock()
	r := actors.PartReport{Node: a.ID()}
	if j != nil {
		ctx, cancel := context.WithTimeout(context.Background(), partDumpWait)
		if got, err := j.PartReport(ctx, a.ID()); err == nil {
			r = got
		}
		cancel()
	}
	a.reply(m, r)
}

// PartDumps asks nodes for their parts of job and returns the reports
// they answered with in time; a node that does not answer is left out.
func (a *Agent) PartDumps(ctx context.Context, job string, nodes []string) []actors.PartReport {
	replies := make(chan *actors.PartReport, len(nodes))
	for _, n := range nodes {
		go func() {
			r := &actors.PartReport{}
			wait := 2 * partDumpWait
			if dl, ok := ctx.Deadline(); ok {
				wait = min(wait, time.Until(dl))
			}
			if err := Request(a.nc, PartDumpSubject(n), partDumpRequest{Job: job}, r, wait); err != nil {
				r = nil
			}
			replies <- r
		}()
	}
	var out []actors.PartReport
	for range nodes {
		if r := <-replies; r != nil {
			out = append(out, *r)
		}
	}
	return out
}
