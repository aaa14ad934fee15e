package actors

import (
	"testing"

	"github.com/asynkron/protoactor-go/actor"
)

// TestTaskIgnoresACreditBeforeItsWiring: a credit for an output the task
// does not have (a late credit of an earlier run of a job with the same
// name, whose task had the same id) is ignored; before the fix it failed
// the task with "index out of range [0] with length 0". The task then runs
// as wired.
func TestTaskIgnoresACreditBeforeItsWiring(t *testing.T) {
	n := startNode(t)
	p, mid := chainPlan("stray-credit")
	j := shellJob(t, n, p, 64)
	task, parent, ready := spawnTaskUnder(t, j, mid, nil)
	root := n.system.Root

	root.Send(task, &creditMsg{output: 0, channel: 0, n: 1})
	root.Send(task, &creditMsg{output: 3, channel: -1, n: 1})

	down := newProbe()
	downPID := spawnProbe(t, n, down)
	producer := spawnProbe(t, n, newProbe())
	in0 := ready.inputs[0]
	root.Send(in0, &channelWireMsg{producer: producer, output: 0, channel: 0})
	root.Send(task, &wireMsg{outputs: [][]*actor.PID{{downPID}}})
	root.Send(task, &startMsg{})
	root.Send(in0, &dataMsg{buf: buf(1, 42)})
	if got := collectData(t, down, 1); len(got) != 1 || got[0] != 42 {
		t.Fatalf("downstream got %v, want [42]", got)
	}
	select {
	case m := <-parent.got:
		if f, ok := m.(probeFailure); ok {
			t.Fatalf("the task failed: %v", f.reason)
		}
	default:
	}
}
