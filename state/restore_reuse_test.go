package state

import (
	"bytes"
	"hash/crc32"
	"testing"
)

// keepTable is a Table implemented elsewhere that keeps the bytes it is
// restored from as they are, without copying them.
type keepTable struct {
	rawTable
}

func (k *keepTable) RestoreGroup(g int, data []byte) error {
	k.groups[g] = data
	return nil
}

// TestRestoreGroupKeepsNothingOfBlob: a restore may reuse its read buffer
// for the next key group, so once RestoreGroup returns, overwriting the
// blob changes nothing restored — in the typed tables (values, maps, lists,
// bytes and strings), in the timer table, nor in a table implemented
// elsewhere that keeps what it is given.
func TestRestoreGroupKeepsNothingOfBlob(t *testing.T) {
	src, dst := newTestTables(t, 4), newTestTables(t, 4)
	srcBytes, dstBytes := NewValueTable[[]byte]("bytes", 4), NewValueTable[[]byte]("bytes", 4)
	srcKeep, dstKeep := &keepTable{rawTable{name: "keep", groups: make([][]byte, 4)}}, &keepTable{rawTable{name: "keep", groups: make([][]byte, 4)}}
	srcTimers, dstTimers := NewTimerTable("timers", 4), NewTimerTable("timers", 4)
	srcTimers.Own([]int{1})
	dstTimers.Own([]int{1})
	for _, pair := range []struct {
		b   *Backend
		tbs []Table
	}{{src.b, []Table{srcBytes, srcKeep, srcTimers}}, {dst.b, []Table{dstBytes, dstKeep, dstTimers}}} {
		for _, tb := range pair.tbs {
			if _, err := pair.b.Register(tb); err != nil {
				t.Fatal(err)
			}
		}
	}
	src.fill(1, "key")
	srcBytes.Put(1, "payload", []byte("value bytes"))
	srcKeep.groups[1] = []byte("opaque section")
	srcTimers.SetWatermark(5)
	srcTimers.Register(Timer{At: 7, Group: 1, Key: "timer key"})
	blob, err := src.b.SnapshotGroup(1)
	if err != nil {
		t.Fatal(err)
	}
	for _, checked := range []bool{false, true} {
		buf := bytes.Clone(blob)
		if checked {
			err = dst.b.RestoreGroupChecked(1, buf, crc32.Checksum(blob, castagnoli))
		} else {
			err = dst.b.RestoreGroup(1, buf)
		}
		if err != nil {
			t.Fatal(err)
		}
		for i := range buf {
			buf[i] = 'Z' // the next section read into the same buffer
		}
		if got, want := dst.dump(1), src.dump(1); got != want {
			t.Fatalf("checked=%v: typed tables changed with the blob:\n%s\nwant\n%s", checked, got, want)
		}
		if v, _ := dstBytes.Get(1, "payload"); string(v) != "value bytes" {
			t.Fatalf("checked=%v: []byte value changed with the blob: %q", checked, v)
		}
		if got := string(dstKeep.groups[1]); got != "opaque section" {
			t.Fatalf("checked=%v: external table's group changed with the blob: %q", checked, got)
		}
		if dstTimers.Floor(1) != 5 {
			t.Fatalf("checked=%v: timer watermark %d, want 5", checked, dstTimers.Floor(1))
		}
		tm, ok := dstTimers.PopDue(EventTime, 7)
		if !ok || tm != (Timer{At: 7, Group: 1, Key: "timer key"}) {
			t.Fatalf("checked=%v: timer %+v (%v) changed with the blob", checked, tm, ok)
		}
	}
}
