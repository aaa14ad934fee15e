package state

import (
	"bytes"
	"errors"
	"maps"
	"strings"
	"testing"
)

func TestValueTableGetPutDelete(t *testing.T) {
	tb := NewValueTable[int64]("counts", 8)
	if _, ok := tb.Get(3, "a"); ok {
		t.Fatal("Get on empty table found a value")
	}
	tb.Put(3, "a", 1)
	tb.Put(3, "b", 2)
	tb.Put(4, "a", 10)
	if v, ok := tb.Get(3, "a"); !ok || v != 1 {
		t.Fatalf("Get(3, a) = %d, %v; want 1, true", v, ok)
	}
	if v, ok := tb.Get(4, "a"); !ok || v != 10 {
		t.Fatalf("Get(4, a) = %d, %v; want 10, true (groups are separate)", v, ok)
	}
	if tb.Len(3) != 2 || tb.Len(4) != 1 || tb.Len(0) != 0 {
		t.Fatalf("Len = %d %d %d; want 2 1 0", tb.Len(3), tb.Len(4), tb.Len(0))
	}
	tb.Delete(3, "a")
	tb.Delete(5, "nothing") // no-op on an unallocated group
	if _, ok := tb.Get(3, "a"); ok {
		t.Fatal("deleted key still present")
	}
	got := maps.Collect(tb.All(3))
	if !maps.Equal(got, map[string]int64{"b": 2}) {
		t.Fatalf("All(3) = %v", got)
	}
	tb.DropGroup(3)
	if tb.Len(3) != 0 || tb.Len(4) != 1 {
		t.Fatalf("after DropGroup(3): Len = %d %d; want 0 1", tb.Len(3), tb.Len(4))
	}
	if tb.Name() != "counts" || tb.Kind() != KindValue || tb.MaxParallelism() != 8 {
		t.Fatalf("Name/Kind/MaxParallelism = %q %v %d", tb.Name(), tb.Kind(), tb.MaxParallelism())
	}
}

func TestValueTableGroupRoundTrip(t *testing.T) {
	src := NewValueTable[int64]("counts", 16)
	for i, k := range []string{"x", "y", "z", "\x00bin\xff"} {
		src.Put(5, k, int64(i*1000-1))
		src.Put(6, k, int64(-i))
	}
	data, err := src.SnapshotGroup(5)
	if err != nil {
		t.Fatal(err)
	}
	dst := NewValueTable[int64]("counts", 16)
	dst.Put(5, "stale", 99) // replaced by the restore
	dst.Put(7, "other", 7)  // untouched
	if err := dst.RestoreGroup(5, data); err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(maps.Collect(dst.All(5)), maps.Collect(src.All(5))) {
		t.Fatalf("group 5 = %v, want %v", maps.Collect(dst.All(5)), maps.Collect(src.All(5)))
	}
	if dst.Len(6) != 0 {
		t.Fatal("group 6 moved along with group 5")
	}
	if v, ok := dst.Get(7, "other"); !ok || v != 7 {
		t.Fatal("group 7 was disturbed")
	}
}

func TestValueTableEmptyGroup(t *testing.T) {
	tb := NewValueTable[string]("s", 4)
	data, err := tb.SnapshotGroup(2)
	if err != nil || data != nil {
		t.Fatalf("SnapshotGroup of empty group = %v, %v; want nil, nil", data, err)
	}
	tb.Put(2, "k", "v")
	tb.Delete(2, "k")
	if data, _ := tb.SnapshotGroup(2); data != nil {
		t.Fatalf("group emptied by Delete snapshots as %x, want nil", data)
	}
	tb.Put(2, "k", "v")
	if err := tb.RestoreGroup(2, nil); err != nil {
		t.Fatal(err)
	}
	if tb.Len(2) != 0 {
		t.Fatal("restoring nil did not clear the group")
	}
}

func TestValueTableGroupRange(t *testing.T) {
	tb := NewValueTable[int]("n", 4)
	for _, g := range []int{-1, 4, 100} {
		if _, err := tb.SnapshotGroup(g); !errors.Is(err, ErrGroupRange) {
			t.Errorf("SnapshotGroup(%d) error = %v, want ErrGroupRange", g, err)
		}
		if err := tb.RestoreGroup(g, []byte{0x80}); !errors.Is(err, ErrGroupRange) {
			t.Errorf("RestoreGroup(%d) error = %v, want ErrGroupRange", g, err)
		}
	}
}

// event is a struct value with msgpack tags, as operators keep in state.
type event struct {
	ID      string            `msgpack:"id"`
	Count   int64             `msgpack:"n"`
	Tags    []string          `msgpack:"tags,omitempty"`
	Labels  map[string]string `msgpack:"labels,omitempty"`
	Skipped string            `msgpack:"-"`
	Ratio   float64           `msgpack:"r"`
}

func TestValueTableStructValues(t *testing.T) {
	src := NewValueTable[event]("events", 8)
	want := map[string]event{
		"a": {ID: "a", Count: 3, Tags: []string{"x", "y"}, Labels: map[string]string{"k2": "v2", "k1": "v1"}, Ratio: 0.5},
		"b": {ID: "b", Count: -1 << 40},
	}
	for k, v := range want {
		src.Put(1, k, v)
	}
	src.Put(1, "c", event{ID: "c", Skipped: "not stored"})
	want["c"] = event{ID: "c"}
	data, err := src.SnapshotGroup(1)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte("labels")) || bytes.Contains(data, []byte("Labels")) {
		t.Fatal("encoding does not use the msgpack tag names")
	}
	dst := NewValueTable[event]("events", 8)
	if err := dst.RestoreGroup(1, data); err != nil {
		t.Fatal(err)
	}
	got := maps.Collect(dst.All(1))
	if len(got) != len(want) {
		t.Fatalf("restored %d keys, want %d", len(got), len(want))
	}
	for k, w := range want {
		g := got[k]
		if g.ID != w.ID || g.Count != w.Count || g.Ratio != w.Ratio || g.Skipped != "" ||
			strings.Join(g.Tags, ",") != strings.Join(w.Tags, ",") || !maps.Equal(g.Labels, w.Labels) {
			t.Errorf("key %q = %+v, want %+v", k, g, w)
		}
	}
}

// roundTrip snapshots group 0 of a one-entry table of T and restores it.
func roundTrip[T any](t *testing.T, v T) T {
	t.Helper()
	src := NewValueTable[T]("v", 1)
	src.Put(0, "k", v)
	data, err := src.SnapshotGroup(0)
	if err != nil {
		t.Fatal(err)
	}
	dst := NewValueTable[T]("v", 1)
	if err := dst.RestoreGroup(0, data); err != nil {
		t.Fatalf("restore %T: %v", v, err)
	}
	got, ok := dst.Get(0, "k")
	if !ok {
		t.Fatalf("restore %T: key missing", v)
	}
	return got
}

type counter int64

func TestValueTableScalarTypes(t *testing.T) {
	if got := roundTrip(t, int(-123456789)); got != -123456789 {
		t.Errorf("int: %d", got)
	}
	if got := roundTrip(t, int64(-1<<62)); got != -1<<62 {
		t.Errorf("int64: %d", got)
	}
	if got := roundTrip(t, int32(-1<<30)); got != -1<<30 {
		t.Errorf("int32: %d", got)
	}
	if got := roundTrip(t, uint64(1<<63+5)); got != 1<<63+5 {
		t.Errorf("uint64: %d", got)
	}
	if got := roundTrip(t, 3.25); got != 3.25 {
		t.Errorf("float64: %v", got)
	}
	if got := roundTrip(t, "héllo"); got != "héllo" {
		t.Errorf("string: %q", got)
	}
	if got := roundTrip(t, true); !got {
		t.Errorf("bool: %v", got)
	}
	if got := roundTrip(t, []byte{0, 1, 255}); !bytes.Equal(got, []byte{0, 1, 255}) {
		t.Errorf("[]byte: %v", got)
	}
	if got := roundTrip(t, counter(77)); got != 77 {
		t.Errorf("named int: %d", got)
	}
	if got := roundTrip(t, &event{ID: "p"}); got == nil || got.ID != "p" {
		t.Errorf("pointer: %+v", got)
	}
}

func TestValueTableDeterministicBytes(t *testing.T) {
	keys := []string{"m", "a", "z", "b", "k", "q"}
	a := NewValueTable[event]("e", 2)
	b := NewValueTable[event]("e", 2)
	for i, k := range keys {
		a.Put(0, k, event{ID: k, Count: int64(i), Labels: map[string]string{"x": k, "a": k, "m": k}})
	}
	for i := len(keys) - 1; i >= 0; i-- {
		k := keys[i]
		b.Put(0, "junk"+k, event{})
		b.Put(0, k, event{ID: k, Count: int64(i), Labels: map[string]string{"m": k, "x": k, "a": k}})
		b.Delete(0, "junk"+k)
	}
	da, err := a.SnapshotGroup(0)
	if err != nil {
		t.Fatal(err)
	}
	for range 20 { // map iteration order varies between runs
		db, err := b.SnapshotGroup(0)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(da, db) {
			t.Fatalf("same state, different bytes:\n%x\n%x", da, db)
		}
	}
}

func TestValueTableCorrupt(t *testing.T) {
	src := NewValueTable[string]("names", 8)
	src.Put(3, "alpha", "one")
	src.Put(3, "beta", "two")
	data, err := src.SnapshotGroup(3)
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string][]byte{
		"garbage":  []byte("this is not msgpack"),
		"trailing": append(bytes.Clone(data), 0xc0),
		"huge len": {0xdf, 0xff, 0xff, 0xff, 0xff},
		"not map":  {0x92, 0x01, 0x02},
		"int key":  {0x81, 0x01, 0xa1, 'x'},
	}
	for i := 1; i < len(data); i++ {
		cases["truncated "+string(rune('a'+i%26))+string(rune('0'+i/26))] = data[:i]
	}
	for name, bad := range cases {
		dst := NewValueTable[string]("names", 8)
		dst.Put(3, "keep", "me")
		err := dst.RestoreGroup(3, bad)
		if !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: error = %v, want ErrCorrupt", name, err)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, `"names"`) || !strings.Contains(msg, "key group 3") {
			t.Errorf("%s: error %q does not name table and group", name, msg)
		}
		if v, ok := dst.Get(3, "keep"); !ok || v != "me" || dst.Len(3) != 1 {
			t.Errorf("%s: failed restore changed the group", name)
		}
	}
}
