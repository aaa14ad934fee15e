package state

import (
	"errors"
	"testing"
)

// rawTable is a Table implemented outside the typed tables: it stores each
// group's snapshot bytes verbatim.
type rawTable struct {
	name   string
	groups [][]byte
}

func (r *rawTable) Name() string                        { return r.name }
func (r *rawTable) Kind() Kind                          { return KindValue }
func (r *rawTable) MaxParallelism() int                 { return len(r.groups) }
func (r *rawTable) SnapshotGroup(g int) ([]byte, error) { return r.groups[g], nil }
func (r *rawTable) DropGroup(g int)                     { r.groups[g] = nil }
func (r *rawTable) Len(g int) int                       { return min(len(r.groups[g]), 1) }
func (r *rawTable) RestoreGroup(g int, data []byte) error {
	if string(data) == "reject" {
		return errors.New("raw table refuses")
	}
	r.groups[g] = append([]byte(nil), data...)
	return nil
}

func TestBackendExternalTable(t *testing.T) {
	src, dst := NewBackend(4), NewBackend(4)
	srcRaw, dstRaw := &rawTable{name: "raw", groups: make([][]byte, 4)}, &rawTable{name: "raw", groups: make([][]byte, 4)}
	srcVals, dstVals := NewValueTable[int]("vals", 4), NewValueTable[int]("vals", 4)
	for _, tb := range []Table{srcRaw, srcVals} {
		if _, err := src.Register(tb); err != nil {
			t.Fatal(err)
		}
	}
	for _, tb := range []Table{dstRaw, dstVals} {
		if _, err := dst.Register(tb); err != nil {
			t.Fatal(err)
		}
	}
	srcRaw.groups[2] = []byte("opaque")
	srcVals.Put(2, "k", 42)
	blob, err := src.SnapshotGroup(2)
	if err != nil {
		t.Fatal(err)
	}
	if err := dst.RestoreGroup(2, blob); err != nil {
		t.Fatal(err)
	}
	if string(dstRaw.groups[2]) != "opaque" {
		t.Fatalf("raw table group 2 = %q", dstRaw.groups[2])
	}
	if v, _ := dstVals.Get(2, "k"); v != 42 {
		t.Fatalf("vals group 2 k = %d", v)
	}

	// An external table's own error is wrapped with group and table, and the
	// typed tables are not committed.
	srcRaw.groups[2] = []byte("reject")
	srcVals.Put(2, "k", 43)
	blob, _ = src.SnapshotGroup(2)
	err = dst.RestoreGroup(2, blob)
	if err == nil || err.Error() != `state: restore key group 2 table "raw": raw table refuses` {
		t.Fatalf("error = %v", err)
	}
	if v, _ := dstVals.Get(2, "k"); v != 42 {
		t.Fatalf("typed table committed although the restore failed: %d", v)
	}
}
