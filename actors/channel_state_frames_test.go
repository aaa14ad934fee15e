package actors

import (
	"testing"

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
