package actors

import (
	"fmt"
	"testing"

	"github.com/asynkron/protoactor-go/actor"
)

// TestTaskReplaysEveryRestoredChannelBeforeAnyNewInput restores channel state
// on input 0 only, while new buffers already wait on input 1: every restored
// buffer is processed before any new one on any input, as redistributed
// channel state needs (a key's older records may sit on another channel than
// its newer ones).
func TestTaskReplaysEveryRestoredChannelBeforeAnyNewInput(t *testing.T) {
	n := startNode(t)
	p, mid := fanInPlan("replay-all-first")
	j := shellJob(t, n, p, 64)
	restored := map[int][]int64{0: {10, 11, 12, 13}}
	task, _, _ := spawnTaskUnder(t, j, mid, channelsStateManifest(t, j, mid, 7, restored))
	down := newProbe()
	downPID := spawnProbe(t, n, down)
	root := n.system.Root
	root.Send(task, &wireMsg{outputs: [][]*actor.PID{{downPID}}})
	root.Send(task, &deliverMsg{input: 1, buf: buf(1, 20)})
	root.Send(task, &deliverMsg{input: 1, buf: buf(2, 21)})
	root.Send(task, &deliverMsg{input: 0, buf: buf(1, 14)})
	root.Send(task, &startMsg{})

	got := collectData(t, down, 7)
	if first := fmt.Sprint(got[:4]); first != fmt.Sprint([]int64{10, 11, 12, 13}) {
		t.Fatalf("processed %v: the first four are not the restored buffers in order", got)
	}
}
