package actors

import (
	"fmt"

	"github.com/asynkron/protoactor-go/actor"
)

// taskFailureStrategy is the job actor's supervisor strategy: a failing task (or a
// channel below it, escalated) is reported to the job, which stops with the error.
// Restarting from checkpoints is the supervision package's job.
type taskFailureStrategy struct{ job *Job }

// HandleFailure reports the failure to the job actor.
func (s *taskFailureStrategy) HandleFailure(sys *actor.ActorSystem, _ actor.Supervisor, child *actor.PID, _ *actor.RestartStatistics, reason any, _ any) {
	s.job.mu.Lock()
	pid := s.job.pid
	s.job.mu.Unlock()
	sys.Root.Send(pid, &taskFailedMsg{who: child, reason: reason})
}

// escalateStrategy hands a child's failure to the supervisor's own parent: a
// failing input channel fails its task.
type escalateStrategy struct{}

// HandleFailure escalates.
func (escalateStrategy) HandleFailure(_ *actor.ActorSystem, sup actor.Supervisor, child *actor.PID, _ *actor.RestartStatistics, reason any, msg any) {
	sup.EscalateFailure(fmt.Errorf("input channel %s: %v", child.Id, reason), msg)
}
