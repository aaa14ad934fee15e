package state

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// testTables is a backend with one table of each kind.
type testTables struct {
	b      *Backend
	counts *ValueTable[int64]
	seen   *MapTable[string, bool]
	buf    *ListTable[string]
}

func newTestTables(t testing.TB, maxParallelism int) testTables {
	t.Helper()
	tt := testTables{
		b:      NewBackend(maxParallelism),
		counts: NewValueTable[int64]("counts", maxParallelism),
		seen:   NewMapTable[string, bool]("seen", maxParallelism),
		buf:    NewListTable[string]("buf", maxParallelism),
	}
	for _, tb := range []Table{tt.counts, tt.seen, tt.buf} {
		if _, err := tt.b.Register(tb); err != nil {
			t.Fatal(err)
		}
	}
	return tt
}

func (tt testTables) fill(g int, tag string) {
	tt.counts.Put(g, tag+"-a", int64(g)*100+1)
	tt.counts.Put(g, tag+"-b", int64(g)*100+2)
	tt.seen.Put(g, tag+"-a", "x", true)
	tt.seen.Put(g, tag+"-a", "y", false)
	tt.buf.Add(g, tag+"-c", "first")
	tt.buf.Add(g, tag+"-c", "second")
}

// dump renders group g of every table in a canonical text form.
func (tt testTables) dump(g int) string {
	var sb strings.Builder
	for _, k := range slices.Sorted(tt.counts.Keys(g)) {
		v, _ := tt.counts.Get(g, k)
		sb.WriteString("counts " + k + "=" + strconv.FormatInt(v, 10) + "\n")
	}
	for _, k := range slices.Sorted(tt.seen.Keys(g)) {
		for _, uk := range slices.Sorted(maps.Keys(maps.Collect(tt.seen.Entries(g, k)))) {
			v, _ := tt.seen.Get(g, k, uk)
			sb.WriteString("seen " + k + "/" + uk + "=" + map[bool]string{true: "t", false: "f"}[v] + "\n")
		}
	}
	for _, k := range slices.Sorted(tt.buf.Keys(g)) {
		sb.WriteString("buf " + k + "=" + strings.Join(tt.buf.Get(g, k), ",") + "\n")
	}
	return sb.String()
}

func TestBackendRegister(t *testing.T) {
	b := NewBackend(16)
	i, err := b.Register(NewValueTable[int]("a", 16))
	if err != nil || i != 0 {
		t.Fatalf("Register = %d, %v", i, err)
	}
	if i, err := b.Register(NewListTable[int]("b", 16)); err != nil || i != 1 {
		t.Fatalf("Register = %d, %v", i, err)
	}
	if _, err := b.Register(NewMapTable[int, int]("a", 16)); !errors.Is(err, ErrDuplicateTable) {
		t.Fatalf("duplicate name: %v", err)
	}
	if _, err := b.Register(NewValueTable[int]("c", 8)); err == nil {
		t.Fatal("table with other maxParallelism accepted")
	}
	if _, err := b.Register(NewValueTable[int]("", 16)); err == nil {
		t.Fatal("empty name accepted")
	}
	if _, err := b.Register(nil); err == nil {
		t.Fatal("nil table accepted")
	}
	if b.NumTables() != 2 || b.Table(1).Name() != "b" {
		t.Fatalf("NumTables = %d, Table(1) = %q", b.NumTables(), b.Table(1).Name())
	}
	if i, ok := b.Index("b"); !ok || i != 1 {
		t.Fatalf("Index(b) = %d, %v", i, ok)
	}
}

func TestBackendGroupRoundTrip(t *testing.T) {
	const maxP = 32
	src := newTestTables(t, maxP)
	for _, g := range []int{0, 5, 6, 31} {
		src.fill(g, "src")
	}
	if got := src.b.NonEmptyGroups(); !slices.Equal(got, []int{0, 5, 6, 31}) {
		t.Fatalf("NonEmptyGroups = %v", got)
	}
	if n := src.b.GroupLen(5); n != 4 {
		t.Fatalf("GroupLen(5) = %d, want 4", n)
	}

	// Restore only group 5 into a backend that has other state.
	dst := newTestTables(t, maxP)
	dst.fill(5, "stale")
	dst.fill(6, "dst")
	blob, err := src.b.SnapshotGroup(5)
	if err != nil {
		t.Fatal(err)
	}
	before6 := dst.dump(6)
	if err := dst.b.RestoreGroup(5, blob); err != nil {
		t.Fatal(err)
	}
	if got, want := dst.dump(5), src.dump(5); got != want {
		t.Fatalf("group 5 after restore:\n%s\nwant:\n%s", got, want)
	}
	if dst.dump(6) != before6 {
		t.Fatal("group 6 changed by restoring group 5")
	}
	if got := dst.b.NonEmptyGroups(); !slices.Equal(got, []int{5, 6}) {
		t.Fatalf("NonEmptyGroups after restore = %v", got)
	}

	// A fresh backend restores every group and snapshots to the same bytes.
	fresh := newTestTables(t, maxP)
	for g := range maxP {
		blob, err := src.b.SnapshotGroup(g)
		if err != nil {
			t.Fatal(err)
		}
		if err := fresh.b.RestoreGroup(g, blob); err != nil {
			t.Fatalf("group %d: %v", g, err)
		}
		again, err := fresh.b.SnapshotGroup(g)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(blob, again) {
			t.Fatalf("group %d: restored state snapshots to different bytes", g)
		}
		if fresh.dump(g) != src.dump(g) {
			t.Fatalf("group %d differs after restore", g)
		}
	}
}

func TestBackendEmptyGroupBlobClears(t *testing.T) {
	src := newTestTables(t, 4)
	blob, err := src.b.SnapshotGroup(2)
	if err != nil {
		t.Fatal(err)
	}
	if len(blob) == 0 {
		t.Fatal("empty group gave an empty blob; want a valid blob")
	}
	dst := newTestTables(t, 4)
	dst.fill(2, "x")
	if err := dst.b.RestoreGroup(2, blob); err != nil {
		t.Fatal(err)
	}
	if n := dst.b.GroupLen(2); n != 0 {
		t.Fatalf("restoring an empty group's blob left %d keys", n)
	}
}

func TestBackendTableMissingFromBlobIsCleared(t *testing.T) {
	src := newTestTables(t, 4)
	src.counts.Put(1, "only-counts", 1)
	blob, _ := src.b.SnapshotGroup(1)
	dst := newTestTables(t, 4)
	dst.fill(1, "old")
	if err := dst.b.RestoreGroup(1, blob); err != nil {
		t.Fatal(err)
	}
	if dst.seen.Len(1) != 0 || dst.buf.Len(1) != 0 || dst.counts.Len(1) != 1 {
		t.Fatalf("Len = %d %d %d; want 1 0 0", dst.counts.Len(1), dst.seen.Len(1), dst.buf.Len(1))
	}
}

// TestBackendBlobIsBoundToGroup: a blob restored under another key group
// number, or into a backend with another maxParallelism, is rejected, since
// its keys hash to the group it was taken from.
func TestBackendBlobIsBoundToGroup(t *testing.T) {
	src := newTestTables(t, 16)
	src.fill(3, "k")
	blob, _ := src.b.SnapshotGroup(3)
	dst := newTestTables(t, 16)
	dst.fill(4, "keep")
	err := dst.b.RestoreGroup(4, blob)
	if !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), "key group 4") || !strings.Contains(err.Error(), "key group 3") {
		t.Fatalf("restore into other group: %v; want ErrMismatch naming both groups", err)
	}
	if dst.b.GroupLen(4) != 4 {
		t.Fatal("rejected restore changed the group")
	}
	other := newTestTables(t, 32)
	if err := other.b.RestoreGroup(3, blob); !errors.Is(err, ErrMismatch) {
		t.Fatalf("restore into other maxParallelism: %v; want ErrMismatch", err)
	}
}

func TestBackendUnknownTableAndKind(t *testing.T) {
	src := newTestTables(t, 8)
	src.fill(2, "k")
	blob, _ := src.b.SnapshotGroup(2)

	small := NewBackend(8)
	counts := NewValueTable[int64]("counts", 8)
	if _, err := small.Register(counts); err != nil {
		t.Fatal(err)
	}
	err := small.RestoreGroup(2, blob)
	if !errors.Is(err, ErrUnknownTable) || !strings.Contains(err.Error(), "key group 2") ||
		!(strings.Contains(err.Error(), `"seen"`) || strings.Contains(err.Error(), `"buf"`)) {
		t.Fatalf("unknown table: %v", err)
	}
	if counts.Len(2) != 0 {
		t.Fatal("rejected restore changed a table")
	}

	kinds := NewBackend(8)
	for _, tb := range []Table{NewValueTable[int64]("counts", 8), NewValueTable[int64]("seen", 8), NewListTable[string]("buf", 8)} {
		if _, err := kinds.Register(tb); err != nil {
			t.Fatal(err)
		}
	}
	err = kinds.RestoreGroup(2, blob)
	if !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), `"seen"`) {
		t.Fatalf("kind mismatch: %v", err)
	}
}

func TestBackendCorruptBlobs(t *testing.T) {
	src := newTestTables(t, 8)
	src.fill(7, "k")
	blob, err := src.b.SnapshotGroup(7)
	if err != nil {
		t.Fatal(err)
	}
	check := func(name string, bad []byte, want error) {
		t.Helper()
		dst := newTestTables(t, 8)
		dst.fill(7, "keep")
		before := dst.dump(7)
		err := dst.b.RestoreGroup(7, bad)
		if !errors.Is(err, want) {
			t.Errorf("%s: error = %v, want %v", name, err, want)
			return
		}
		if !strings.Contains(err.Error(), "key group 7") {
			t.Errorf("%s: error %q does not name the group", name, err)
		}
		if dst.dump(7) != before {
			t.Errorf("%s: failed restore changed the backend", name)
		}
	}
	check("empty", nil, ErrCorrupt)
	for i := 1; i < len(blob); i++ {
		check("truncated", blob[:i], ErrCorrupt)
	}
	for i := 1; i < len(blob); i++ { // byte 0 is the version
		bad := bytes.Clone(blob)
		bad[i] ^= 0x10
		check("bit flip", bad, ErrCorrupt)
	}
	check("garbage", []byte{formatVersion, 'g', 'a', 'r', 'b', 'a', 'g', 'e'}, ErrCorrupt)
	check("appended", append(bytes.Clone(blob), 0), ErrCorrupt)
	v2 := bytes.Clone(blob)
	v2[0] = deltaVersion + 1 // 2 is a delta (delta.go)
	check("version", v2, ErrVersion)
	check("version only", []byte{9}, ErrVersion)

	// Valid checksum over a malformed body.
	body := []byte{formatVersion, 0x93, 0x07, 0x08, 0x81, 0xa1, 'x'}
	check("checksummed garbage", withCRC(body), ErrCorrupt)
}

func withCRC(b []byte) []byte {
	return binary.BigEndian.AppendUint32(bytes.Clone(b), crc32.Checksum(b, castagnoli))
}

// A blob whose envelope is valid but one table's data is not: the error names
// the table and group, and no table is changed, including the ones whose data
// was fine.
func TestBackendCorruptTableIsAtomic(t *testing.T) {
	src := newTestTables(t, 8)
	src.fill(1, "new")
	countsData, _ := src.counts.SnapshotGroup(1)
	listData, _ := src.buf.SnapshotGroup(1)
	var eb encBuf
	blob, err := encodeBlob(&eb, blobHeader{group: 1, maxParallelism: 8}, []blobEntry{
		{name: "buf", kind: KindList, data: listData},
		{name: "counts", kind: KindValue, data: countsData},
		{name: "seen", kind: KindMap, data: []byte{0x81, 0xa1, 'k', 0x81, 0xa1}},
	})
	if err != nil {
		t.Fatal(err)
	}
	dst := newTestTables(t, 8)
	dst.fill(1, "old")
	before := dst.dump(1)
	err = dst.b.RestoreGroup(1, blob)
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), `"seen"`) || !strings.Contains(err.Error(), "key group 1") {
		t.Fatalf("error = %v; want ErrCorrupt naming table seen and key group 1", err)
	}
	if dst.dump(1) != before {
		t.Fatal("failed restore changed the backend")
	}
}

func TestBackendDeterministicBytes(t *testing.T) {
	a, b := newTestTables(t, 4), newTestTables(t, 4)
	a.fill(0, "k")
	b.buf.Add(0, "k-c", "first") // different insertion order, same state
	b.seen.Put(0, "k-a", "y", false)
	b.counts.Put(0, "k-b", 2)
	b.seen.Put(0, "k-a", "x", true)
	b.counts.Put(0, "k-a", 1)
	b.buf.Add(0, "k-c", "second")
	b.counts.Put(0, "zzz", 5)
	b.counts.Delete(0, "zzz")
	ba, _ := a.b.SnapshotGroup(0)
	bb, _ := b.b.SnapshotGroup(0)
	if !bytes.Equal(ba, bb) {
		t.Fatalf("same state, different blobs:\n%x\n%x", ba, bb)
	}
	// Registration order does not matter either.
	c := NewBackend(4)
	for _, tb := range []Table{b.buf, b.seen, b.counts} {
		if _, err := c.Register(tb); err != nil {
			t.Fatal(err)
		}
	}
	bc, _ := c.SnapshotGroup(0)
	if !bytes.Equal(ba, bc) {
		t.Fatal("registration order changed the blob")
	}
}

func TestBackendGroupRange(t *testing.T) {
	tt := newTestTables(t, 4)
	if _, err := tt.b.SnapshotGroup(4); !errors.Is(err, ErrGroupRange) {
		t.Fatalf("SnapshotGroup(4): %v", err)
	}
	if err := tt.b.RestoreGroup(-1, nil); !errors.Is(err, ErrGroupRange) {
		t.Fatalf("RestoreGroup(-1): %v", err)
	}
}

func TestBackendDropGroup(t *testing.T) {
	tt := newTestTables(t, 4)
	tt.fill(1, "a")
	tt.fill(2, "b")
	tt.b.DropGroup(1)
	if got := tt.b.NonEmptyGroups(); !slices.Equal(got, []int{2}) {
		t.Fatalf("NonEmptyGroups = %v, want [2]", got)
	}
}
