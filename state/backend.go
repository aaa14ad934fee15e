package state

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Backend holds the tables of one task instance and snapshots or restores
// all of them one key group at a time (see the package doc for the blob
// format). It is not safe for concurrent use.
type Backend struct {
	maxParallelism int
	tables         []Table
	byName         map[string]int
	sorted         []int // indices into tables, by name

	entries []blobEntry // scratch for SnapshotGroup
	eb      encBuf
	pending *AsyncSnapshot // the asynchronous snapshot frozen last (snapshot_async.go)
	lazy    *lazyGroups    // key groups restored and not decoded yet (lazy.go); nil before the first lazy restore
	incr    *incremental   // change tracking for incremental snapshots (changes.go); nil when off
	scratch *scratchKeep   // the encoder's scratch, kept from snapshot to snapshot; made by the first
}

// NewBackend returns a backend with no tables for maxParallelism key groups.
// It panics if maxParallelism < 1.
func NewBackend(maxParallelism int) *Backend {
	if maxParallelism < 1 {
		panic(fmt.Sprintf("state: backend maxParallelism %d < 1", maxParallelism))
	}
	return &Backend{maxParallelism: maxParallelism, byName: make(map[string]int)}
}

// MaxParallelism returns the number of key groups.
func (b *Backend) MaxParallelism() int { return b.maxParallelism }

// Register adds t and returns its index for Table. The name must be non-empty
// and unique (ErrDuplicateTable) and t must have the backend's
// maxParallelism.
func (b *Backend) Register(t Table) (int, error) {
	if t == nil {
		return -1, errors.New("state: register nil table")
	}
	name := t.Name()
	if name == "" {
		return -1, errors.New("state: register table with empty name")
	}
	if _, dup := b.byName[name]; dup {
		return -1, fmt.Errorf("state: register table %q: %w", name, ErrDuplicateTable)
	}
	if mp := t.MaxParallelism(); mp != b.maxParallelism {
		return -1, fmt.Errorf("state: register table %q: maxParallelism %d, backend has %d",
			name, mp, b.maxParallelism)
	}
	if c, ok := t.(changeTracker); ok && b.incr != nil {
		c.trackChanges(true)
	}
	i := len(b.tables)
	b.tables = append(b.tables, t)
	b.byName[name] = i
	pos, _ := slices.BinarySearchFunc(b.sorted, name, func(j int, n string) int {
		return strings.Compare(b.tables[j].Name(), n)
	})
	b.sorted = slices.Insert(b.sorted, pos, i)
	return i, nil
}

// Table returns the table registered at index i.
func (b *Backend) Table(i int) Table { return b.tables[i] }

// Index returns the index of the table named name.
func (b *Backend) Index(name string) (int, bool) {
	i, ok := b.byName[name]
	return i, ok
}

// NumTables returns the number of registered tables.
func (b *Backend) NumTables() int { return len(b.tables) }

// checkGroup returns ErrGroupRange for a group outside [0, maxParallelism).
func (b *Backend) checkGroup(op string, g int) error {
	if g < 0 || g >= b.maxParallelism {
		return fmt.Errorf("state: %s key group %d (maxParallelism %d): %w", op, g, b.maxParallelism, ErrGroupRange)
	}
	return nil
}

// SnapshotGroup returns one blob holding key group g of every table. A group
// with no state still gives a (small) blob, whose restore empties the group.
func (b *Backend) SnapshotGroup(g int) ([]byte, error) {
	if err := b.checkGroup("snapshot", g); err != nil {
		return nil, err
	}
	entries := b.entries[:0]
	defer func() {
		clear(entries)
		b.entries = entries[:0]
	}()
	for _, i := range b.sorted {
		t := b.tables[i]
		data, err := t.SnapshotGroup(g)
		if err != nil {
			return nil, fmt.Errorf("state: snapshot key group %d table %q: %w", g, t.Name(), err)
		}
		if len(data) > 0 {
			entries = append(entries, blobEntry{name: t.Name(), kind: t.Kind(), data: data})
		}
	}
	blob, err := encodeBlob(&b.eb, blobHeader{group: g, maxParallelism: b.maxParallelism}, entries)
	if err != nil {
		return nil, fmt.Errorf("state: snapshot key group %d: %w", g, err)
	}
	return blob, nil
}

// RestoreGroup replaces key group g of every table with the contents of blob;
// tables the blob does not mention end up empty in g.
//
// Errors name the group and, where one is at fault, the table: a malformed,
// truncated or checksum-failing blob wraps ErrCorrupt, an unknown format
// version ErrVersion, a blob taken for another key group or maxParallelism
// or a table of another kind ErrMismatch, a table that is not registered
// ErrUnknownTable. The tables of this package are all decoded before any is
// changed, so on error the backend is unchanged (a Table implemented
// elsewhere is restored in place and may be left changed). The backend
// keeps nothing of blob: the caller may reuse it once RestoreGroup returns.
func (b *Backend) RestoreGroup(g int, blob []byte) error {
	return b.restoreGroup(g, blob, blobCRC{})
}

// RestoreGroupChecked is RestoreGroup for a blob whose CRC-32C as a whole
// the caller has already verified to be crc (a checkpoint store verifies
// every section it reads): the blob's own checksum is then checked without
// reading the blob a second time, with the same outcome as RestoreGroup's
// check.
func (b *Backend) RestoreGroupChecked(g int, blob []byte, crc uint32) error {
	return b.restoreGroup(g, blob, blobCRC{known: true, sum: crc})
}

func (b *Backend) restoreGroup(g int, blob []byte, crc blobCRC) error {
	commit, err := b.stageBlob(g, blob, crc, copyInput)
	if err != nil {
		return err
	}
	return commit()
}

// DropGroup removes key group g from every table.
func (b *Backend) DropGroup(g int) {
	b.lazy.discard(g) // no need to decode what goes
	b.markWhole(g)
	for _, t := range b.tables {
		t.DropGroup(g)
	}
}

// GroupLen returns the number of keys with state in key group g, summed over
// the tables.
func (b *Backend) GroupLen(g int) int {
	n := 0
	for _, t := range b.tables {
		n += t.Len(g)
	}
	return n
}

// NonEmptyGroups returns, in ascending order, the key groups in which some
// table has state.
func (b *Backend) NonEmptyGroups() []int {
	var out []int
	for g := range b.maxParallelism {
		for _, t := range b.tables {
			if t.Len(g) > 0 {
				out = append(out, g)
				break
			}
		}
	}
	return out
}

// target returns the registered table a blob entry of group g is for, and
// its index: an unknown name or another kind is an error.
func (b *Backend) target(g int, en blobEntry) (int, Table, error) {
	i, ok := b.byName[en.name]
	if !ok {
		return -1, nil, fmt.Errorf("state: restore key group %d table %q: %w", g, en.name, ErrUnknownTable)
	}
	t := b.tables[i]
	if t.Kind() != en.kind {
		return -1, nil, fmt.Errorf("state: restore key group %d table %q: blob holds a %s table, registered is a %s table: %w",
			g, en.name, en.kind, t.Kind(), ErrMismatch)
	}
	return i, t, nil
}
