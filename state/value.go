package state

import (
	"iter"
	"unsafe"

	"github.com/vmihailenco/msgpack/v5"
)

// ValueTable holds one value of type T per key, split by key group.
//
// Values live in slots behind pointers in the per-group maps, each with the
// claim through which the task and an asynchronous snapshot's encoder agree
// who reads its value at the barrier (cow.go), and the table remembers
// the slot of the last key Get or Put touched: the usual read-modify-write
// (Get then Put of the same key, as a running count does) costs one map
// lookup. Get and Put do not allocate, except when a key is first added. A
// restore decodes a key group's values into slabs of slots, one allocation
// per slab rather than per key.
type ValueTable[T any] struct {
	core keyed[*valueSlot[T]]
	enc  encodeFunc[T]
	app  appendFunc[T] // enc's bytes appended; nil when T has no appender
	dec  decodeIntoFunc[T]
	refs []uintptr // offsets in T of the headers of the bytes it refers to (refOffsets)
	// the slot of the last key looked up; nil when unknown
	last      *valueSlot[T]
	lastKey   string
	lastGroup int
	// lastKept is the snapshot that will not read last's live value any
	// more: Get touched it for that one. A Put of the same key then skips
	// the touch (a read-modify-write looks the key up in the snapshot's
	// overlays once, not twice).
	lastKept *cow[*valueSlot[T]]
}

// valueSlot is one key's value, the claim of the snapshot that may read
// it, and the change epoch it was last noted as changed in (changeLog).
type valueSlot[T any] struct {
	v     T
	claim entryClaim
	noted uint64 // task-owned
}

// claimOf returns p's claim, nil for no slot.
func claimOf[T any](p *valueSlot[T]) *entryClaim {
	if p == nil {
		return nil
	}
	return &p.claim
}

var _ Table = (*ValueTable[int])(nil)

// NewValueTable returns an empty value table named name split into
// maxParallelism key groups. It panics if maxParallelism < 1.
func NewValueTable[T any](name string, maxParallelism int) *ValueTable[T] {
	return &ValueTable[T]{
		core: newKeyed[*valueSlot[T]](name, KindValue, maxParallelism),
		enc:  encoderFor[T](),
		app:  appenderFor[T](),
		dec:  decoderIntoFor[T](),
		refs: refOffsets[T](),
	}
}

// slabBytes bounds the size of one slab of restored values.
const slabBytes = 64 << 10

// slabLen is the number of slots of the next slab when left values are
// still to decode: enough for all of them up to slabBytes, at least one.
func slabLen[T any](left int) int {
	return max(1, min(left, slabBytes/max(1, int(unsafe.Sizeof(*new(T))))))
}

// slot returns the pointer to key's value in group g, nil when unset.
func (t *ValueTable[T]) slot(g int, key string) *valueSlot[T] {
	if t.isLast(g, key) {
		return t.last
	}
	p := t.core.groups[g][key]
	if p != nil {
		t.remember(p, g, key)
	}
	return p
}

// isLast reports whether key of group g is the key of the remembered slot.
// The same key is usually the same string (the record's field), so a
// pointer comparison decides; an equal string elsewhere in memory just
// takes the map lookup.
func (t *ValueTable[T]) isLast(g int, key string) bool {
	return t.last != nil && g == t.lastGroup && len(key) == len(t.lastKey) && unsafe.StringData(key) == unsafe.StringData(t.lastKey)
}

// remember makes p, key's slot in group g, the remembered one.
func (t *ValueTable[T]) remember(p *valueSlot[T], g int, key string) {
	t.last, t.lastKey, t.lastGroup, t.lastKept = p, key, g, nil
}

// Get returns the value of key in key group g and whether it is set.
func (t *ValueTable[T]) Get(g int, key string) (T, bool) {
	t.core.lazy.ready(g)
	p := t.slot(g, key)
	if cl := t.core.changes; cl != nil && cl.reads && p != nil {
		// The value handed out may be changed in place; no value, no
		// change.
		t.core.changedMarked(g, key, &p.noted)
	}
	t.core.touchKnown(g, key, false, known[*valueSlot[T]]{v: p, present: p != nil, ok: true})
	if p != nil {
		t.lastKept = t.core.cow // p is last: slot remembered it
		return p.v, true
	}
	var zero T
	return zero, false
}

// Put sets the value of key in key group g.
func (t *ValueTable[T]) Put(g int, key string, v T) {
	t.core.lazy.ready(g)
	if c := t.core.cow; c != nil && c.gs[g].live && (t.lastKept != c || !t.isLast(g, key)) {
		// Assigning an existing slot leaves the map alone.
		p := t.slot(g, key)
		if mu := t.core.touchKnown(g, key, p == nil, known[*valueSlot[T]]{v: p, present: p != nil, ok: true}); mu != nil {
			defer mu.Unlock()
		}
	}
	if p := t.slot(g, key); p != nil {
		t.core.changedMarked(g, key, &p.noted)
		p.v = v
		return
	}
	p := new(valueSlot[T]) // not {v: v}: that would move v to the heap on every call
	p.v = v
	t.core.group(g)[key] = p
	t.core.changedMarked(g, key, &p.noted)
	t.core.edits[g]++
	t.remember(p, g, key)
}

// forget drops the remembered slot (its entry may be gone).
func (t *ValueTable[T]) forget() { t.last, t.lastKey, t.lastKept = nil, "", nil }

// Delete removes key from key group g.
func (t *ValueTable[T]) Delete(g int, key string) {
	t.core.lazy.ready(g)
	t.forget()
	t.core.changed(g, key)
	if mu := t.core.touch(g, key, true); mu != nil {
		defer mu.Unlock()
	}
	m := t.core.groups[g]
	if p := m[key]; p != nil {
		var zero T
		p.v = zero // a slab slot outlives its key: let go of what it holds
		delete(m, key)
		t.core.edits[g]++
	}
}

// All iterates over the keys and values of key group g in no particular
// order. Deleting the current key while iterating is allowed.
func (t *ValueTable[T]) All(g int) iter.Seq2[string, T] {
	t.core.lazy.ready(g)
	m := t.core.groups[g]
	return func(yield func(string, T) bool) {
		for k, p := range m {
			if cl := t.core.changes; cl != nil && cl.reads {
				t.core.changedMarked(g, k, &p.noted) // the value handed out may be changed in place
			}
			t.core.touchKnown(g, k, false, known[*valueSlot[T]]{})
			if !yield(k, p.v) {
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
func (t *ValueTable[T]) Len(g int) int { return t.core.size(g) }

// DropGroup removes every key of key group g.
func (t *ValueTable[T]) DropGroup(g int) {
	t.forget()
	t.core.drop(g)
}

// SnapshotGroup returns the msgpack encoding of key group g (a map from key
// to value, keys sorted), or nil when the group is empty.
func (t *ValueTable[T]) SnapshotGroup(g int) ([]byte, error) {
	return t.core.snapshot(g, func(e *msgpack.Encoder, p *valueSlot[T]) error { return t.enc(e, p.v) })
}

// RestoreGroup replaces key group g with the entries encoded in data. On
// error (wrapping ErrCorrupt or ErrGroupRange) the group is unchanged.
func (t *ValueTable[T]) RestoreGroup(g int, data []byte) error {
	commit, err := t.stageGroup(g, data, copyInput)
	if err != nil {
		return err
	}
	commit()
	return nil
}

func (t *ValueTable[T]) stageGroup(g int, data []byte, in keepInput) (func(), error) {
	var slab []valueSlot[T] // free slots, each handed out once
	commit, err := t.core.stage(g, data, in, func(d *decoder, left int) (*valueSlot[T], bool, error) {
		if len(slab) == 0 {
			slab = make([]valueSlot[T], slabLen[valueSlot[T]](left))
		}
		p := &slab[0]
		slab = slab[1:]
		return p, true, t.dec(d, &p.v)
	})
	return t.forgetting(commit, err)
}

// forgetting makes a staged commit also drop the remembered slot.
func (t *ValueTable[T]) forgetting(commit func(), err error) (func(), error) {
	if err != nil {
		return nil, err
	}
	return func() {
		t.forget()
		commit()
	}, nil
}

// freezeGroups lets snap read groups until it has encoded them (cow.go).
func (t *ValueTable[T]) freezeGroups(snap *AsyncSnapshot, groups []int) frozenEncoder {
	enc, app := t.enc, t.app
	codec := valueCodec[*valueSlot[T]]{enc: func(e *msgpack.Encoder, p *valueSlot[T]) error { return enc(e, p.v) }, claim: claimOf[T]}
	if app != nil {
		codec.app = func(b []byte, p *valueSlot[T]) []byte { return app(b, p.v) }
	}
	if refs := t.refs; len(refs) > 0 {
		codec.prefetch = func(p *valueSlot[T]) { prefetchRefs(unsafe.Pointer(&p.v), refs) }
	}
	return t.core.freeze(snap, groups, codec)
}

func (t *ValueTable[T]) thaw(snap *AsyncSnapshot) { t.core.thaw(snap) }

// trackChanges notes changed keys for incremental snapshots (changes.go);
// a value that holds references counts as changed when it is read.
func (t *ValueTable[T]) trackChanges(on bool) {
	t.core.trackChanges(on, readsCanChange[T]())
}

func (t *ValueTable[T]) takeChanges() ([][]string, []bool) { return t.core.takeChanges() }
