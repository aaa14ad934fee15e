package actors

import (
	"github.com/asynkron/protoactor-go/actor"

	taskid "github.com/weirstream/weir/internal/task"
)

// On a cluster the rescale barrier reaches a task over another path (from
// the sources, over NATS) than the task's part in the rescale (from the
// coordinator): so the coordinator gives the sources the barrier only once
// every task has begun its part. In one process the order of sends does it.

// rescaleBegunMsg says a task has begun its part in a rescale.
type rescaleBegunMsg struct {
	priority
	seq          uint64
	op, instance int
}

// begunWait is the tasks a rescale waits for before it injects.
type begunWait struct {
	waiting map[taskid.ID]bool
	sources []*actor.PID
}

// rescaleAwaitBegun waits for every task that takes part in the rescale
// (part) to begin before the sources get the barrier.
func (a *jobActor) rescaleAwaitBegun(sources []*actor.PID, part map[taskid.ID]bool) {
	run := a.rs.run
	w := &begunWait{waiting: map[taskid.ID]bool{}, sources: sources}
	for _, op := range run.next.Operators {
		for i := 0; i < max(op.Parallelism, a.job.Plan.Operators[op.ID].Parallelism); i++ {
			if id := taskID(op, i); part[id] {
				w.waiting[id] = true
			}
		}
	}
	run.begun = w
}

// rescaleBegun notes that a task has begun; the last one injects.
func (a *jobActor) rescaleBegun(ctx actor.Context, m *rescaleBegunMsg) {
	if a.rs == nil || a.rs.run == nil || m.seq != a.rs.run.plan.Input.Seq || a.rs.run.begun == nil {
		return // of a rescale an abort ended
	}
	w := a.rs.run.begun
	delete(w.waiting, a.idOf(m.op, m.instance))
	if len(w.waiting) > 0 {
		return
	}
	a.rs.run.begun = nil
	for _, pid := range w.sources {
		ctx.Send(pid, &rescaleInjectMsg{})
	}
}
