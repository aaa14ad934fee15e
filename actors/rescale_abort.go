package actors

import taskid "github.com/weirstream/weir/internal/task"

// rescaleUnfinish forgets that a task finished if an aborted rescale let it
// finish: a removed instance ends once it has handed off and drained, and an
// added one may end after its part, both before the commit. The abort
// restarts every region from the latest checkpoint, taken before the
// rescale, so every old instance runs again (and the added ones are
// dropped): none of them has finished. A finish left counted would make the
// job ignore the restarted instance's death (a kill of it restarted nothing,
// and the job waited forever) and end once the others finished.
func (a *jobActor) rescaleUnfinish() {
	run := a.rs.run
	ids := append([]taskid.ID(nil), run.added...)
	for _, op := range a.job.Plan.Operators {
		for i := 0; i < op.Parallelism; i++ {
			ids = append(ids, taskID(op, i))
		}
	}
	for _, id := range ids {
		if a.finishedTasks[id] {
			delete(a.finishedTasks, id)
			a.finished--
		}
	}
}
