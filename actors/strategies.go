package actors

import (
	"fmt"

	"github.com/asynkron/protoactor-go/actor"
)

// escalateStrategy hands a child's failure to the supervisor's own parent: a
// failing input channel fails its task.
type escalateStrategy struct{}

// HandleFailure escalates.
func (escalateStrategy) HandleFailure(_ *actor.ActorSystem, sup actor.Supervisor, child *actor.PID, _ *actor.RestartStatistics, reason any, msg any) {
	sup.EscalateFailure(fmt.Errorf("input channel %s: %v", child.Id, reason), msg)
}
