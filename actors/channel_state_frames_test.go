package actors

import (
	"fmt"
	"testing"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/weirstream/weir/store"
)

// TestTaskFramesReferOnlyLastCompleted scripts which stored buffers a
// checkpoint may refer to: those of the last completed checkpoint, and
// only when no checkpoint was snapshotted since (one in flight or aborted
// may never complete, so the next is written whole).
func TestTaskFramesReferOnlyLastCompleted(t *testing.T) {
	buf := &Buffer{Seq: 1}
	locs := func(ckpt uint64) map[*Buffer]frameLoc {
		return map[*Buffer]frameLoc{buf: {ckpt: ckpt, ref: store.BlobRef{Name: "op/0/state", Size: 10}}}
	}
	type step struct {
		op   string // snap, record, confirm, forget
		id   uint64
		want uint64 // snap: the checkpoint the view refers to (0: none)
	}
	for _, c := range []struct {
		name  string
		steps []step
	}{
		{"first checkpoint writes whole", []step{{"snap", 1, 0}}},
		{"consecutive completed", []step{{"snap", 1, 0}, {"record", 1, 0}, {"confirm", 1, 0}, {"snap", 2, 1}, {"record", 2, 0}, {"confirm", 2, 0}, {"snap", 3, 2}}},
		{"aborted one is never referred to", []step{{"snap", 1, 0}, {"record", 1, 0}, {"confirm", 1, 0},
			{"snap", 2, 1}, {"record", 2, 0}, {"forget", 2, 0}, {"snap", 3, 0}, {"record", 3, 0}, {"confirm", 3, 0}, {"snap", 4, 3}}},
		{"aborted before upload", []step{{"snap", 1, 0}, {"record", 1, 0}, {"confirm", 1, 0}, {"snap", 2, 1}, {"snap", 3, 0}}},
		{"one in flight: write whole", []step{{"snap", 1, 0}, {"record", 1, 0}, {"confirm", 1, 0},
			{"snap", 2, 1}, {"record", 2, 0}, {"snap", 3, 0}, {"record", 3, 0}, {"confirm", 2, 0}, {"snap", 4, 0},
			{"confirm", 3, 0}, {"snap", 5, 0}, {"record", 4, 0}, {"confirm", 4, 0}, {"record", 5, 0}, {"confirm", 5, 0}, {"snap", 6, 5}}},
		{"late confirm of an older one", []step{{"snap", 1, 0}, {"record", 1, 0}, {"snap", 2, 0}, {"record", 2, 0},
			{"confirm", 2, 0}, {"confirm", 1, 0}, {"snap", 3, 2}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var f taskFrames
			for i, s := range c.steps {
				switch s.op {
				case "snap":
					v := f.viewFor(s.id)
					got := uint64(0)
					if v.at != 0 {
						got = v.locs[buf].ckpt
					}
					if got != s.want || (v.at == 0) != (s.want == 0) {
						t.Fatalf("step %d: snapshot %d refers to checkpoint %d (view at %d), want %d", i, s.id, got, v.at, s.want)
					}
				case "record":
					f.record(s.id, locs(s.id))
				case "confirm":
					f.confirm(s.id)
				case "forget":
					f.forget(s.id)
				}
			}
		})
	}
}

// TestCheckpointRefersToBuffersStillQueued drives a task by hand: checkpoint
// 9's barrier overtakes buffers 3 and 4; after 9 completes, checkpoint 10's
// barrier overtakes them again with 5. Checkpoint 10 refers to 9's frames
// for 3 and 4 and writes only 5. A task restored from 10 takes checkpoint
// 12 before replaying anything: it writes nothing and refers to the frames
// 9 and 10 stored, and restoring 12 replays 3, 4, 5.
func TestCheckpointRefersToBuffersStillQueued(t *testing.T) {
	n := startNode(t)
	p, mid := fanInPlan("refer-queued")
	j := shellJob(t, n, p, 64)
	task, parent, _ := spawnTaskUnder(t, j, mid, nil)
	root := n.system.Root
	b3, b4, b5 := buf(3, 3), buf(4, 4), buf(5, 5)

	root.Send(task, &barrierOvertakeMsg{input: 0, id: 9, lastSeq: 4, overtaken: []*Buffer{b3, b4}})
	root.Send(task, &barrierOvertakeMsg{input: 1, id: 9, lastSeq: 0})
	ack9 := next[*taskAckMsg](t, parent, "the acknowledgement of checkpoint 9")
	if ack9.inflightRefB != 0 || ack9.inflightB == 0 {
		t.Fatalf("checkpoint 9 wrote %d and referred to %d bytes, want all written", ack9.inflightB, ack9.inflightRefB)
	}
	root.Send(task, &checkpointDoneMsg{id: 9})
	root.Send(task, &barrierOvertakeMsg{input: 0, id: 10, lastSeq: 5, overtaken: []*Buffer{b3, b4, b5}})
	root.Send(task, &barrierOvertakeMsg{input: 1, id: 10, lastSeq: 0})
	ack10 := next[*taskAckMsg](t, parent, "the acknowledgement of checkpoint 10")
	parts := ack10.snap.Channels[0].Parts
	if len(parts) != 2 || parts[0].Checkpoint != 9 || parts[0].Buffers != 2 || parts[1].Checkpoint != 10 || parts[1].Buffers != 1 {
		t.Fatalf("checkpoint 10's parts %+v, want 2 buffers of checkpoint 9 then 1 of its own", parts)
	}
	if ack10.inflightRefB != ack9.inflightB || ack10.inflightB >= ack9.inflightB {
		t.Fatalf("checkpoint 10 wrote %d and referred to %d bytes; checkpoint 9 wrote %d", ack10.inflightB, ack10.inflightRefB, ack9.inflightB)
	}
	if got := capturedState(t, j, mid, ack10); fmt.Sprint(got) != "map[0:[3 4 5]]" {
		t.Fatalf("checkpoint 10 holds %v", got)
	}

	second, parent2, _ := spawnTaskUnder(t, j, mid, restoreManifestOf(j, ack10))
	root.Send(second, &barrierOvertakeMsg{input: 0, id: 12, lastSeq: 0})
	root.Send(second, &barrierOvertakeMsg{input: 1, id: 12, lastSeq: 0})
	ack12 := next[*taskAckMsg](t, parent2, "the acknowledgement of checkpoint 12")
	if ack12.inflightB != 0 || ack12.inflightRefB != ack10.inflightB+ack10.inflightRefB {
		t.Fatalf("checkpoint 12 wrote %d and referred to %d bytes, want 0 and %d", ack12.inflightB, ack12.inflightRefB, ack10.inflightB+ack10.inflightRefB)
	}
	third, _, _ := spawnTaskUnder(t, j, mid, restoreManifestOf(j, ack12))
	down := newProbe()
	downPID := spawnProbe(t, n, down)
	root.Send(third, &wireMsg{outputs: [][]*actor.PID{{downPID}}})
	root.Send(third, &startMsg{})
	if got := collectData(t, down, 3); fmt.Sprint(got) != "[3 4 5]" {
		t.Fatalf("restoring checkpoint 12 replayed %v, want [3 4 5]", got)
	}
}
