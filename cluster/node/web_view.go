package node

import (
	"github.com/weirstream/weir/actors"
	"github.com/weirstream/weir/cluster"
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
