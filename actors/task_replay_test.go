package actors

import (
	"fmt"
	"testing"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/weirstream/weir/store"
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

// TestCheckpointDuringReplayKeepsTheRestAheadOfNewerState takes checkpoint 9
// while a task restored from checkpoint 7 has replayed none of input 0's
// restored buffers, and input 1's barrier overtakes a new buffer (20).
// Restoring checkpoint 9 must replay 7's rest (10…13) on input 0 before
// 9's newer state on input 1, as the first run would have: a consumer that
// is not keyed can have a key's older record on one channel and its newer on
// another.
func TestCheckpointDuringReplayKeepsTheRestAheadOfNewerState(t *testing.T) {
	n := startNode(t)
	p, mid := fanInPlan("replay-rounds")
	j := shellJob(t, n, p, 64)
	first, parent, _ := spawnTaskUnder(t, j, mid, channelsStateManifest(t, j, mid, 7, map[int][]int64{0: {10, 11, 12, 13}}))
	root := n.system.Root
	root.Send(first, &barrierOvertakeMsg{input: 0, id: 9, lastSeq: 0})
	root.Send(first, &barrierOvertakeMsg{input: 1, id: 9, lastSeq: 1, overtaken: []*Buffer{buf(1, 20)}})
	ack := next[*taskAckMsg](t, parent, "the acknowledgement of checkpoint 9")
	if got := capturedState(t, j, mid, ack); fmt.Sprint(got) != "map[0:[10 11 12 13] 1:[20]]" {
		t.Fatalf("checkpoint 9 captured %v", got)
	}

	m9 := restoreManifestOf(j, ack)
	second, _, _ := spawnTaskUnder(t, j, mid, m9)
	down := newProbe()
	downPID := spawnProbe(t, n, down)
	root.Send(second, &wireMsg{outputs: [][]*actor.PID{{downPID}}})
	root.Send(second, &startMsg{})
	if got := collectData(t, down, 5); fmt.Sprint(got) != fmt.Sprint([]int64{10, 11, 12, 13, 20}) {
		t.Fatalf("restored checkpoint 9 replayed %v: checkpoint 7's rest must come before 9's newer state", got)
	}
}

// restoreManifestOf is the manifest of a checkpoint of one task: the one
// whose acknowledgement is ack.
func restoreManifestOf(j *Job, ack *taskAckMsg) *store.Manifest {
	par := map[string]int{}
	for _, o := range j.Plan.Operators {
		par[o.Name] = o.Parallelism
	}
	return &store.Manifest{Job: j.Plan.Name, CheckpointID: ack.id, MaxParallelism: j.Plan.MaxParallelism, Parallelism: par, Tasks: []store.TaskSnapshot{ack.snap}}
}

// TestRedistributedReplayKeepsRounds restores at parallelism 1 a checkpoint
// (9) of mid at parallelism 2, taken while old instance 1 still had round 7
// (10, 11) to replay on its channel from producer 1: the new instance
// replays round 7 before any of round 9 (20 on the channel from producer 0,
// 21 after 11 from producer 1), whichever channel each lands on.
func TestRedistributedReplayKeepsRounds(t *testing.T) {
	n := startNode(t)
	p, mid := fanInPlan("replay-rounds-redistributed")
	j := shellJob(t, n, p, 64)
	put := func(instance, input int, values []int64, rounds []store.ChannelRound) store.ChannelBlob {
		cb := storeChannelState(t, j, mid, 9, instance, input, values)
		cb.Rounds = rounds
		return cb
	}
	m := &store.Manifest{Job: p.Name, CheckpointID: 9, MaxParallelism: p.MaxParallelism,
		Parallelism: map[string]int{"src": 2, "mid": 2, "sink": 1},
		Tasks: []store.TaskSnapshot{
			{Operator: "mid", Instance: 0, SourceOffset: -1, Channels: []store.ChannelBlob{put(0, 0, []int64{20}, nil)}},
			{Operator: "mid", Instance: 1, SourceOffset: -1, Channels: []store.ChannelBlob{
				put(1, 1, []int64{10, 11, 21}, []store.ChannelRound{{Checkpoint: 7, Buffers: 2}, {Checkpoint: 9, Buffers: 1}})}},
		}}
	task, _, _ := spawnTaskUnder(t, j, mid, m)
	down := newProbe()
	downPID := spawnProbe(t, n, down)
	root := n.system.Root
	root.Send(task, &wireMsg{outputs: [][]*actor.PID{{downPID}}})
	root.Send(task, &startMsg{})
	got := collectData(t, down, 4)
	if first := fmt.Sprint(got[:2]); first != "[10 11]" {
		t.Fatalf("replayed %v: round 7 (10, 11) must come before round 9", got)
	}
}
