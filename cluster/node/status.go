package node

import (
	"sort"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/weirstream/weir/cluster"
)

// statusCheckpoints is how many recent checkpoints a status shows per job.
const statusCheckpoints = 5

// onStatus answers a status request with this node's view.
func (a *Agent) onStatus(m *nats.Msg) {
	a.reply(m, a.Status(time.Now()))
}

// Status is this node's view: itself, the nodes it sees, the jobs it
// coordinates and the bad input it has seen on the wire.
func (a *Agent) Status(now time.Time) StatusReply {
	hb := a.heartbeat()
	r := StatusReply{Node: a.cfg.ID, Slots: a.cfg.Slots, Used: hb.Used, Parts: hb.Jobs, BadInput: a.counters.Snapshot(),
		Held: hb.Held, Restored: hb.Restored,
		Rates: a.rates.rates(now, a.localJobs())}
	a.mu.Lock()
	members := a.core.Members()
	for _, m := range members.Alive() {
		age, _ := members.Age(m.Node, now)
		r.Members = append(r.Members, MemberStatus{Node: m.Node, Slots: m.Slots, Used: m.Used, AgeS: age.Seconds()})
	}
	a.mu.Unlock()
	for _, cj := range a.coordJobs() {
		js := JobStatus{Name: cj.name, State: cluster.JobRunning, Coordinator: a.cfg.ID, Tasks: cj.job.Placement()}
		js.Restarts, js.RestartCauses = cj.restarts()
		js.Rescales = rescaleStatus(cj.job)
		cps := cj.job.Checkpoints()
		for _, c := range cps[max(0, len(cps)-statusCheckpoints):] {
			js.Checkpoints = append(js.Checkpoints, CheckpointBrief{ID: c.ID, Mode: c.Mode, DurationMs: float64(c.Duration) / float64(time.Millisecond),
				AgeS: now.Sub(c.Completed).Seconds()})
		}
		r.Jobs = append(r.Jobs, js)
	}
	a.mu.Lock()
	for name, why := range a.core.Waiting() {
		if a.coord[name] == nil {
			r.Jobs = append(r.Jobs, JobStatus{Name: name, State: JobWaiting, Coordinator: a.cfg.ID, Waiting: why})
		}
	}
	a.mu.Unlock()
	sort.Slice(r.Jobs, func(i, j int) bool { return r.Jobs[i].Name < r.Jobs[j].Name })
	return r
}
