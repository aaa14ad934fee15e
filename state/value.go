package state

import "iter"

// ValueTable holds one value of type T per key, split by key group.
//
// Get and Put cost a slice index and one map lookup and do not allocate
// (beyond map growth when a key is first added).
type ValueTable[T any] struct {
	core keyed[T]
	enc  encodeFunc[T]
	dec  func(*decoder) (T, bool, error)
}

var _ Table = (*ValueTable[int])(nil)

// NewValueTable returns an empty value table named name split into
// maxParallelism key groups. It panics if maxParallelism < 1.
func NewValueTable[T any](name string, maxParallelism int) *ValueTable[T] {
	dec := decoderFor[T]()
	return &ValueTable[T]{
		core: newKeyed[T](name, KindValue, maxParallelism),
		enc:  encoderFor[T](),
		dec: func(d *decoder) (T, bool, error) {
			v, err := dec(d.Decoder)
			return v, true, err
		},
	}
}

// Get returns the value of key in key group g and whether it is set.
func (t *ValueTable[T]) Get(g int, key string) (T, bool) {
	v, ok := t.core.groups[g][key]
	return v, ok
}

// Put sets the value of key in key group g.
func (t *ValueTable[T]) Put(g int, key string, v T) {
	m := t.core.groups[g]
	if m == nil {
		m = t.core.group(g)
	}
	m[key] = v
}

// Delete removes key from key group g.
func (t *ValueTable[T]) Delete(g int, key string) {
	delete(t.core.groups[g], key)
}

// All iterates over the keys and values of key group g in no particular
// order. Deleting the current key while iterating is allowed.
func (t *ValueTable[T]) All(g int) iter.Seq2[string, T] {
	m := t.core.groups[g]
	return func(yield func(string, T) bool) {
		for k, v := range m {
			if !yield(k, v) {
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
func (t *ValueTable[T]) DropGroup(g int) { t.core.groups[g] = nil }

// SnapshotGroup returns the msgpack encoding of key group g (a map from key
// to value, keys sorted), or nil when the group is empty.
func (t *ValueTable[T]) SnapshotGroup(g int) ([]byte, error) {
	return t.core.snapshot(g, t.enc)
}

// RestoreGroup replaces key group g with the entries encoded in data. On
// error (wrapping ErrCorrupt or ErrGroupRange) the group is unchanged.
func (t *ValueTable[T]) RestoreGroup(g int, data []byte) error {
	return t.core.restore(g, data, t.dec)
}

func (t *ValueTable[T]) stageGroup(g int, data []byte) (func(), error) {
	return t.core.stage(g, data, t.dec)
}
