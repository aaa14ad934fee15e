package cli

import (
	"sort"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/weirstream/weir/cluster"
)

// statusCheckpoints is how many recent checkpoints a status shows per job.
const statusCheckpoints = 5

// onStatus answers a status request with this node's view.
func (a *agent) onStatus(m *nats.Msg) {
	a.reply(m, a.status(time.Now()))
}

// status is this node's view: itself, the nodes it sees, the jobs it
// coordinates and the bad input it has seen on the wire.
func (a *agent) status(now time.Time) statusReply {
	hb := a.heartbeat()
	r := statusReply{Node: a.cfg.ID, Slots: a.cfg.Slots, Used: hb.Used, Parts: hb.Jobs, BadInput: a.counters.Snapshot()}
	a.mu.Lock()
	for _, m := range a.members.Alive() {
		age, _ := a.members.Age(m.Node, now)
		r.Members = append(r.Members, memberStatus{Node: m.Node, Slots: m.Slots, Used: m.Used, AgeS: age.Seconds()})
	}
	a.mu.Unlock()
	for _, cj := range a.coordJobs() {
		js := jobStatus{Name: cj.name, State: cluster.JobRunning, Coordinator: a.cfg.ID, Tasks: cj.job.Placement(),
			Restarts: cj.job.Supervision().Restarts}
		cps := cj.job.Checkpoints()
		for _, c := range cps[max(0, len(cps)-statusCheckpoints):] {
			js.Checkpoints = append(js.Checkpoints, checkpointBrief{ID: c.ID, Mode: c.Mode, DurationMs: float64(c.Duration) / float64(time.Millisecond)})
		}
		r.Jobs = append(r.Jobs, js)
	}
	a.mu.Lock()
	for name, why := range a.placing {
		if a.coord[name] == nil {
			r.Jobs = append(r.Jobs, jobStatus{Name: name, State: jobWaiting, Coordinator: a.cfg.ID, Waiting: why})
		}
	}
	a.mu.Unlock()
	sort.Slice(r.Jobs, func(i, j int) bool { return r.Jobs[i].Name < r.Jobs[j].Name })
	return r
}
