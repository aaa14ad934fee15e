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

// partDumpReply is a node's part of a job: its tasks' dumps.
type partDumpReply struct {
	Tasks []actors.TaskDump `msgpack:"tasks"`
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
	var r partDumpReply
	if j != nil {
		ctx, cancel := context.WithTimeout(context.Background(), partDumpWait)
		d, err := j.Dump(ctx)
		cancel()
		if err == nil {
			r.Tasks = d.Tasks
		}
	}
	a.reply(m, r)
}

// PartDumps asks nodes for their parts of job and returns the tasks'
// dumps they answered with in time; a node that does not answer is left
// out.
func (a *Agent) PartDumps(ctx context.Context, job string, nodes []string) []actors.TaskDump {
	replies := make(chan []actors.TaskDump, len(nodes))
	for _, n := range nodes {
		go func() {
			var r partDumpReply
			wait := 2 * partDumpWait
			if dl, ok := ctx.Deadline(); ok {
				wait = min(wait, time.Until(dl))
			}
			if err := Request(a.nc, PartDumpSubject(n), partDumpRequest{Job: job}, &r, wait); err != nil {
				r.Tasks = nil
			}
			replies <- r.Tasks
		}()
	}
	var out []actors.TaskDump
	for range nodes {
		out = append(out, <-replies...)
	}
	return out
}
