package state

import (
	"iter"
	"unsafe"

	"github.com/vmihailenco/msgpack/v5"
)

// ValueTable holds one value of type T per key, split by key group.
//
// Values live behind pointers. Besides the per-group maps (which snapshots,
// restores and drops work on), one index over all groups finds a key's slot
// with a single lookup in one map, and the table remembers the slot of the
// last key Get or Put touched: the usual read-modify-write (Get then Put of
// the same key, as a running count does) costs one map lookup. Get and Put do
// not allocate, except when a key is first added.
type ValueTable[T any] struct {
	core keyed[*T]
	enc  encodeFunc[T]
	dec  func(*decoder) (*T, bool, error)
	// index[key] is key's slot in one group; whenever it holds {g, p},
	// core.groups[g][key] is p.
	index map[string]indexed[T]
	// the slot of the last key looked up; nil when unknown
	last      *T
	lastKey   string
	lastGroup int
}

// indexed is a key's group and slot in ValueTable.index.
type indexed[T any] struct {
	g int
	p *T
}

var _ Table = (*ValueTable[int])(nil)

// NewValueTable returns an empty value table named name split into
// maxParallelism key groups. It panics if maxParallelism < 1.
func NewValueTable[T any](name string, maxParallelism int) *ValueTable[T] {
	dec := decoderFor[T]()
	return &ValueTable[T]{
		core:  newKeyed[*T](name, KindValue, maxParallelism),
		index: map[string]indexed[T]{},
		enc:   encoderFor[T](),
		dec: func(d *decoder) (*T, bool, error) {
			v, err := dec(d.Decoder)
			return &v, true, err
		},
	}
}

// slot returns the pointer to key's value in group g, nil when unset.
func (t *ValueTable[T]) slot(g int, key string) *T {
	// The same key is usually the same string (the record's field), so a
	// pointer comparison decides; an equal string elsewhere in memory just
	// takes the map lookup.
	if t.last != nil && g == t.lastGroup && len(key) == len(t.lastKey) && unsafe.StringData(key) == unsafe.StringData(t.lastKey) {
		return t.last
	}
	if e, ok := t.index[key]; ok && e.g == g {
		t.last, t.lastKey, t.lastGroup = e.p, key, g
		return e.p
	}
	// The same key in another group (only direct table users do that).
	p := t.core.groups[g][key]
	if p != nil {
		t.index[key] = indexed[T]{g, p}
		t.last, t.lastKey, t.lastGroup = p, key, g
	}
	return p
}

// Get returns the value of key in key group g and whether it is set.
func (t *ValueTable[T]) Get(g int, key string) (T, bool) {
	if p := t.slot(g, key); p != nil {
		return *p, true
	}
	var zero T
	return zero, false
}

// Put sets the value of key in key group g.
func (t *ValueTable[T]) Put(g int, key string, v T) {
	if p := t.slot(g, key); p != nil {
		*p = v
		return
	}
	p := new(T) // not &v: that would move v to the heap on every call
	*p = v
	t.core.group(g)[key] = p
	t.index[key] = indexed[T]{g, p}
	t.last, t.lastKey, t.lastGroup = p, key, g
}

// forget drops the remembered slot (its entry may be gone).
func (t *ValueTable[T]) forget() { t.last, t.lastKey = nil, "" }

// unindex drops key from the index if it points into group g.
func (t *ValueTable[T]) unindex(g int, key string) {
	if e, ok := t.index[key]; ok && e.g == g {
		delete(t.index, key)
	}
}

// unindexGroup drops every key of group g from the index.
func (t *ValueTable[T]) unindexGroup(g int) {
	for key := range t.core.groups[g] {
		t.unindex(g, key)
	}
}

// Delete removes key from key group g.
func (t *ValueTable[T]) Delete(g int, key string) {
	t.forget()
	t.unindex(g, key)
	delete(t.core.groups[g], key)
}

// All iterates over the keys and values of key group g in no particular
// order. Deleting the current key while iterating is allowed.
func (t *ValueTable[T]) All(g int) iter.Seq2[string, T] {
	m := t.core.groups[g]
	return func(yield func(string, T) bool) {
		for k, p := range m {
			if !yield(k, *p) {
				return
			}
		}
	}
}

// Keys iterates over the keys of key group g in no particular order.
func (t *ValueTable[T]) Keys(g int) iter.Seq[string] { return t.core.keysOf(g) }

// Name returns the table's name.
func (t *ValueTable[T]) Name() string { return t.core.name }

// Kind returns KindValue.
func (t *ValueTable[T]) Kind() Kind { return KindValue }

// MaxParallelism returns the number of key groups.
func (t *ValueTable[T]) MaxParallelism() int { return len(t.core.groups) }

// Len returns the number of keys set in key group g.
func (t *ValueTable[T]) Len(g int) int { return len(t.core.groups[g]) }

// DropGroup removes every key of key group g.
func (t *ValueTable[T]) DropGroup(g int) {
	t.forget()
	t.unindexGroup(g)
	t.core.groups[g] = nil
}

// SnapshotGroup returns the msgpack encoding of key group g (a map from key
// to value, keys sorted), or nil when the group is empty.
func (t *ValueTable[T]) SnapshotGroup(g int) ([]byte, error) {
	return t.core.snapshot(g, func(e *msgpack.Encoder, p *T) error { return t.enc(e, *p) })
}

// RestoreGroup replaces key group g with the entries encoded in data. On
// error (wrapping ErrCorrupt or ErrGroupRange) the group is unchanged.
func (t *ValueTable[T]) RestoreGroup(g int, data []byte) error {
	commit, err := t.stageGroup(g, data)
	if err != nil {
		return err
	}
	commit()
	return nil
}

func (t *ValueTable[T]) stageGroup(g int, data []byte) (func(), error) {
	commit, err := t.core.stage(g, data, t.dec)
	if err != nil {
		return nil, err
	}
	return func() {
		t.forget()
		t.unindexGroup(g)
		commit()
		for key, p := range t.core.groups[g] {
			t.index[key] = indexed[T]{g, p}
		}
	}, nil
}
