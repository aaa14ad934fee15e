package state

import (
	"errors"
	"math"
	"testing"
)

// popAll drains the due timers of domain d up to upTo.
func popAll(t *TimerTable, d TimeDomain, upTo int64) []Timer {
	var out []Timer
	for {
		tm, ok := t.PopDue(d, upTo)
		if !ok {
			return out
		}
		out = append(out, tm)
	}
}

func TestTimerTableFiresInTimeOrderOnce(t *testing.T) {
	tt := NewTimerTable("timers", 8)
	tt.Register(Timer{At: 30, Group: 1, Key: "b"})
	tt.Register(Timer{At: 10, Group: 3, Key: "a"})
	tt.Register(Timer{At: 20, Group: 2, Key: "c"})
	tt.Register(Timer{At: 10, Group: 1, Key: "z"})
	tt.Register(Timer{At: 10, Group: 1, Key: "z"}) // twice: one timer
	tt.Register(Timer{At: 15, Domain: ProcessingTime, Group: 1, Key: "p"})
	tt.Register(Timer{At: 25, Group: 4, Key: "gone"})
	tt.Delete(Timer{At: 25, Group: 4, Key: "gone"})

	got := popAll(tt, EventTime, 25)
	want := []Timer{{At: 10, Group: 1, Key: "z"}, {At: 10, Group: 3, Key: "a"}, {At: 20, Group: 2, Key: "c"}}
	if len(got) != len(want) {
		t.Fatalf("fired %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("timer %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	if rest := popAll(tt, EventTime, 25); len(rest) != 0 {
		t.Fatalf("fired again: %+v", rest)
	}
	if p := popAll(tt, ProcessingTime, 100); len(p) != 1 || p[0].Key != "p" {
		t.Fatalf("processing-time timers: %+v", p)
	}
	// Registered again after a delete: fires once.
	tt.Register(Timer{At: 40, Group: 5, Key: "x"})
	tt.Delete(Timer{At: 40, Group: 5, Key: "x"})
	tt.Register(Timer{At: 40, Group: 5, Key: "x"})
	if got := popAll(tt, EventTime, math.MaxInt64); len(got) != 2 || got[0].At != 30 || got[1].Key != "x" {
		t.Fatalf("after re-registering: %+v", got)
	}
}

func TestTimerTableSnapshotMovesTimersAndWatermarkWithTheGroup(t *testing.T) {
	a := NewTimerTable("timers", 4)
	a.Own([]int{0, 1})
	a.SetWatermark(100)
	a.Register(Timer{At: 150, Group: 1, Key: "k1"})
	a.Register(Timer{At: 120, Domain: ProcessingTime, Group: 1, Key: "k2"})
	if a.Len(0) != 1 || a.Len(1) != 3 || a.Len(2) != 0 {
		t.Fatalf("lens %d %d %d: an owned group counts its watermark", a.Len(0), a.Len(1), a.Len(2))
	}
	blobs := map[int][]byte{}
	for g := range 4 {
		b, err := a.SnapshotGroup(g)
		if err != nil {
			t.Fatal(err)
		}
		if b != nil {
			blobs[g] = b
		}
	}
	if len(blobs) != 2 {
		t.Fatalf("snapshotted groups %d, want 2", len(blobs))
	}
	// Another instance takes group 1 only: its timers and watermark come along.
	b := NewTimerTable("timers", 4)
	b.Own([]int{1, 3})
	if err := b.RestoreGroup(1, blobs[1]); err != nil {
		t.Fatal(err)
	}
	if b.Floor(1) != 100 || b.Floor(3) != math.MinInt64 {
		t.Fatalf("floors %d %d", b.Floor(1), b.Floor(3))
	}
	if b.RestoredWatermark() != math.MinInt64 {
		t.Fatalf("group 3 had no watermark, so the restored one is unknown: %d", b.RestoredWatermark())
	}
	if got := popAll(b, EventTime, 149); len(got) != 0 {
		t.Fatalf("fired early: %+v", got)
	}
	if got := popAll(b, EventTime, 150); len(got) != 1 || got[0] != (Timer{At: 150, Group: 1, Key: "k1"}) {
		t.Fatalf("event timers %+v", got)
	}
	if got := popAll(b, ProcessingTime, 200); len(got) != 1 || got[0].Key != "k2" {
		t.Fatalf("processing timers %+v", got)
	}
	b.DropGroup(1)
	if b.Len(1) != 0 || b.Floor(1) != math.MinInt64 {
		t.Fatal("drop left the group")
	}
}

func TestTimerTableRejectsCorruptSnapshots(t *testing.T) {
	a := NewTimerTable("timers", 2)
	a.Own([]int{0})
	a.SetWatermark(5)
	a.Register(Timer{At: 7, Group: 0, Key: "k"})
	blob, err := a.SnapshotGroup(0)
	if err != nil {
		t.Fatal(err)
	}
	for cut := 0; cut < len(blob); cut++ {
		b := NewTimerTable("timers", 2)
		if err := b.RestoreGroup(0, blob[:cut]); cut > 0 && !errors.Is(err, ErrCorrupt) {
			t.Fatalf("cut at %d of %d: %v, want ErrCorrupt", cut, len(blob), err)
		}
	}
	bad := append([]byte(nil), blob...)
	bad[len(bad)-3] = 0xc1 // never used in msgpack
	if err := NewTimerTable("timers", 2).RestoreGroup(0, bad); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("garbage: %v", err)
	}
}

func TestTimerTableThroughBackend(t *testing.T) {
	be := NewBackend(4)
	tt := NewTimerTable("weir.timers", 4)
	if _, err := be.Register(tt); err != nil {
		t.Fatal(err)
	}
	tt.Own([]int{2})
	tt.SetWatermark(9)
	tt.Register(Timer{At: 11, Group: 2, Key: "k"})
	if got := be.NonEmptyGroups(); len(got) != 1 || got[0] != 2 {
		t.Fatalf("non-empty groups %v", got)
	}
	blob, err := be.SnapshotGroup(2)
	if err != nil {
		t.Fatal(err)
	}
	be2 := NewBackend(4)
	tt2 := NewTimerTable("weir.timers", 4)
	if _, err := be2.Register(tt2); err != nil {
		t.Fatal(err)
	}
	if err := be2.RestoreGroup(2, blob); err != nil {
		t.Fatal(err)
	}
	if tt2.Floor(2) != 9 {
		t.Fatalf("floor %d", tt2.Floor(2))
	}
	if tm, ok := tt2.PopDue(EventTime, 11); !ok || tm.Key != "k" {
		t.Fatalf("timer %+v %v", tm, ok)
	}
}
