package state

import (
	"fmt"
	"iter"

	"github.com/vmihailenco/msgpack/v5"
)

// ListTable holds a list of values of type T per key, split by key group. A
// key has state while its list is not empty.
type ListTable[T any] struct {
	core keyed[[]T]
	enc  encodeFunc[T]
	dec  decodeFunc[T]

	encList func(*msgpack.Encoder, []T) error
	decList valueDecoder[[]T]
}

var _ Table = (*ListTable[int])(nil)

// NewListTable returns an empty list table named name split into
// maxParallelism key groups. It panics if maxParallelism < 1.
func NewListTable[T any](name string, maxParallelism int) *ListTable[T] {
	t := &ListTable[T]{
		core: newKeyed[[]T](name, KindList, maxParallelism),
		enc:  encoderFor[T](),
		dec:  decoderFor[T](),
	}
	t.encList = t.encodeList
	t.decList = t.decodeList
	return t
}

// Get returns the list of key in key group g (nil when empty). The slice is
// the table's own: read it, do not keep or modify it; use Update to replace.
func (t *ListTable[T]) Get(g int, key string) []T {
	t.core.lazy.ready(g)
	t.core.touchRead(g, key)
	return t.core.groups[g][key]
}

// Add appends v to the list of key in key group g.
func (t *ListTable[T]) Add(g int, key string, v T) {
	t.core.lazy.ready(g)
	t.core.changed(g, key)
	if mu := t.core.touch(g, key, true); mu != nil {
		defer mu.Unlock()
	}
	m := t.core.groups[g]
	if m == nil {
		m = t.core.group(g)
	}
	if len(m[key]) == 0 {
		t.core.edits[g]++
	}
	m[key] = append(m[key], v)
}

// Update replaces the list of key in key group g with vs, which the table
// takes ownership of; an empty vs clears the key.
func (t *ListTable[T]) Update(g int, key string, vs []T) {
	t.core.lazy.ready(g)
	if len(vs) == 0 {
		t.Clear(g, key)
		return
	}
	t.core.changed(g, key)
	if mu := t.core.touch(g, key, true); mu != nil {
		defer mu.Unlock()
	}
	m := t.core.groups[g]
	if m == nil {
		m = t.core.group(g)
	}
	if len(m[key]) == 0 {
		t.core.edits[g]++
	}
	m[key] = vs
}

// Clear removes the list of key in key group g.
func (t *ListTable[T]) Clear(g int, key string) {
	t.core.lazy.ready(g)
	t.core.changed(g, key)
	if mu := t.core.touch(g, key, true); mu != nil {
		defer mu.Unlock()
	}
	delete(t.core.groups[g], key)
	t.core.edits[g]++
}

// Keys iterates over the keys with a non-empty list in key group g in no
// particular order.
func (t *ListTable[T]) Keys(g int) iter.Seq[string] { return t.core.keysOf(g) }

// Name returns the table's name.
func (t *ListTable[T]) Name() string { return t.core.name }

// Kind returns KindList.
func (t *ListTable[T]) Kind() Kind { return KindList }

// MaxParallelism returns the number of key groups.
func (t *ListTable[T]) MaxParallelism() int { return len(t.core.groups) }

// Len returns the number of keys with a non-empty list in key group g.
func (t *ListTable[T]) Len(g int) int { return t.core.size(g) }

// DropGroup removes every key of key group g.
func (t *ListTable[T]) DropGroup(g int) {
	t.core.drop(g)
}

// SnapshotGroup returns the msgpack encoding of key group g (a map from key,
// sorted, to the array of its values in order), or nil when the group is
// empty.
func (t *ListTable[T]) SnapshotGroup(g int) ([]byte, error) {
	return t.core.snapshot(g, t.encList)
}

// RestoreGroup replaces key group g with the entries encoded in data. On
// error (wrapping ErrCorrupt or ErrGroupRange) the group is unchanged.
func (t *ListTable[T]) RestoreGroup(g int, data []byte) error {
	return t.core.restore(g, data, t.decList)
}

func (t *ListTable[T]) stageGroup(g int, data []byte, in keepInput) (func(), error) {
	return t.core.stage(g, data, in, t.decList)
}

// encodeList writes one key's list as a msgpack array.
func (t *ListTable[T]) encodeList(e *msgpack.Encoder, vs []T) error {
	if err := e.EncodeArrayLen(len(vs)); err != nil {
		return err
	}
	for i, v := range vs {
		if err := t.enc(e, v); err != nil {
			return fmt.Errorf("element %d: %w", i, err)
		}
	}
	return nil
}

// decodeList reads one key's list; an empty list means no state.
func (t *ListTable[T]) decodeList(d *decoder, _ int) ([]T, bool, error) {
	n, err := d.DecodeArrayLen()
	if err != nil {
		return nil, false, err
	}
	if err := d.checkLen(n); err != nil {
		return nil, false, err
	}
	if n <= 0 {
		return nil, false, nil
	}
	vs := make([]T, n)
	for i := range vs {
		if vs[i], err = t.dec(d); err != nil {
			return nil, false, fmt.Errorf("element %d: %w", i, err)
		}
	}
	return vs, true, nil
}

// freezeGroups lets snap read groups until it has encoded them (cow.go).
func (t *ListTable[T]) freezeGroups(snap *AsyncSnapshot, groups []int) frozenEncoder {
	return t.core.freeze(snap, groups, valueCodec[[]T]{enc: t.encodeList})
}

func (t *ListTable[T]) thaw(snap *AsyncSnapshot) { t.core.thaw(snap) }

// trackChanges notes changed keys for incremental snapshots (changes.go);
// reads do not count: Get's slice must not be changed.
func (t *ListTable[T]) trackChanges(on bool) { t.core.trackChanges(on, false) }

func (t *ListTable[T]) takeChanges() ([][]string, []bool) { return t.core.takeChanges() }
