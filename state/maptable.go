package state

import (
	"bytes"
	"fmt"
	"iter"
	"slices"
	"sync"

	"github.com/vmihailenco/msgpack/v5"
)

// MapTable holds, per key, a map from user keys UK to user values UV, split
// by key group. A key has state while its map has at least one entry.
//
// In a snapshot each key's map is written with its user keys sorted by their
// msgpack encoding, so UK must be a type whose msgpack encoding differs for
// different values (strings, integers, structs of them).
type MapTable[UK comparable, UV any] struct {
	core  keyed[map[UK]UV]
	encUK encodeFunc[UK]
	encUV encodeFunc[UV]
	decUK decodeFunc[UK]
	decUV decodeFunc[UV]

	encInner func(*msgpack.Encoder, map[UK]UV) error
	decInner valueDecoder[map[UK]UV]

	ukBuf encBuf       // scratch: encoded user keys of one map
	spans []ukSpan[UK] // scratch: where each user key sits in ukBuf
}

// ukSpan locates the encoding of one user key in the scratch buffer.
type ukSpan[UK any] struct {
	start, end int
	uk         UK
}

var _ Table = (*MapTable[string, int])(nil)

// NewMapTable returns an empty map table named name split into
// maxParallelism key groups. It panics if maxParallelism < 1.
func NewMapTable[UK comparable, UV any](name string, maxParallelism int) *MapTable[UK, UV] {
	t := &MapTable[UK, UV]{
		core:  newKeyed[map[UK]UV](name, KindMap, maxParallelism),
		encUK: encoderFor[UK](),
		encUV: encoderFor[UV](),
		decUK: decoderFor[UK](),
		decUV: decoderFor[UV](),
	}
	t.encInner = t.encodeInner
	t.decInner = t.decodeInner
	return t
}

// Get returns the user value of uk under key in key group g.
func (t *MapTable[UK, UV]) Get(g int, key string, uk UK) (UV, bool) {
	t.core.lazy.ready(g)
	t.core.touchRead(g, key)
	v, ok := t.core.groups[g][key][uk]
	return v, ok
}

// Put sets the user value of uk under key in key group g.
func (t *MapTable[UK, UV]) Put(g int, key string, uk UK, uv UV) {
	t.core.lazy.ready(g)
	t.core.changed(g, key)
	// A key's existing inner map changes without changing the group's map.
	if mu := t.core.touch(g, key, t.core.groups[g][key] == nil); mu != nil {
		defer mu.Unlock()
	}
	m := t.core.groups[g]
	if m == nil {
		m = t.core.group(g)
	}
	inner := m[key]
	if inner == nil {
		inner = make(map[UK]UV)
		m[key] = inner
		t.core.edits[g]++
	}
	inner[uk] = uv
}

// Delete removes uk under key in key group g; the key loses its state when
// its last user key goes.
func (t *MapTable[UK, UV]) Delete(g int, key string, uk UK) {
	t.core.lazy.ready(g)
	t.core.changed(g, key)
	if mu := t.core.touch(g, key, true); mu != nil {
		defer mu.Unlock()
	}
	m := t.core.groups[g]
	inner := m[key]
	if inner == nil {
		return
	}
	delete(inner, uk)
	if len(inner) == 0 {
		delete(m, key)
		t.core.edits[g]++
	}
}

// Clear removes every user key under key in key group g.
func (t *MapTable[UK, UV]) Clear(g int, key string) {
	t.core.lazy.ready(g)
	t.core.changed(g, key)
	if mu := t.core.touch(g, key, true); mu != nil {
		defer mu.Unlock()
	}
	delete(t.core.groups[g], key)
}

// Count returns the number of user keys under key in key group g.
func (t *MapTable[UK, UV]) Count(g int, key string) int {
	t.core.lazy.ready(g)
	return len(t.core.groups[g][key])
}

// Entries iterates over the user keys and values under key in key group g in
// no particular order. Deleting the current user key while iterating is
// allowed.
func (t *MapTable[UK, UV]) Entries(g int, key string) iter.Seq2[UK, UV] {
	t.core.lazy.ready(g)
	t.core.touchRead(g, key)
	inner := t.core.groups[g][key]
	return func(yield func(UK, UV) bool) {
		for uk, uv := range inner {
			if !yield(uk, uv) {
				return
			}
		}
	}
}

// Keys iterates over the keys with state in key group g in no particular
// order.
func (t *MapTable[UK, UV]) Keys(g int) iter.Seq[string] { return t.core.keysOf(g) }

// Name returns the table's name.
func (t *MapTable[UK, UV]) Name() string { return t.core.name }

// Kind returns KindMap.
func (t *MapTable[UK, UV]) Kind() Kind { return KindMap }

// MaxParallelism returns the number of key groups.
func (t *MapTable[UK, UV]) MaxParallelism() int { return len(t.core.groups) }

// Len returns the number of keys with at least one user key in key group g.
func (t *MapTable[UK, UV]) Len(g int) int { return t.core.size(g) }

// DropGroup removes every key of key group g.
func (t *MapTable[UK, UV]) DropGroup(g int) {
	t.core.drop(g)
}

// SnapshotGroup returns the msgpack encoding of key group g (a map from key,
// sorted, to a map from user key, sorted by encoding, to user value), or nil
// when the group is empty.
func (t *MapTable[UK, UV]) SnapshotGroup(g int) ([]byte, error) {
	return t.core.snapshot(g, t.encInner)
}

// RestoreGroup replaces key group g with the entries encoded in data. On
// error (wrapping ErrCorrupt or ErrGroupRange) the group is unchanged.
func (t *MapTable[UK, UV]) RestoreGroup(g int, data []byte) error {
	return t.core.restore(g, data, t.decInner)
}

func (t *MapTable[UK, UV]) stageGroup(g int, data []byte, in keepInput) (func(), error) {
	return t.core.stage(g, data, in, t.decInner)
}

// encodeInner writes one key's map with user keys in encoded-byte order.
func (t *MapTable[UK, UV]) encodeInner(e *msgpack.Encoder, inner map[UK]UV) error {
	ke := t.ukBuf.reset()
	spans := t.spans[:0]
	defer func() {
		clear(spans)
		t.spans = spans[:0]
	}()
	for uk := range inner {
		start := t.ukBuf.buf.Len()
		if err := t.encUK(ke, uk); err != nil {
			return fmt.Errorf("user key %v: %w", uk, err)
		}
		spans = append(spans, ukSpan[UK]{start: start, end: t.ukBuf.buf.Len(), uk: uk})
	}
	raw := t.ukBuf.buf.Bytes()
	slices.SortFunc(spans, func(a, b ukSpan[UK]) int {
		return bytes.Compare(raw[a.start:a.end], raw[b.start:b.end])
	})
	if err := e.EncodeMapLen(len(spans)); err != nil {
		return err
	}
	// The encoder writes straight into its buffer, so already encoded user
	// keys can be copied in between encoder calls.
	w := e.Writer()
	for _, s := range spans {
		if _, err := w.Write(raw[s.start:s.end]); err != nil {
			return err
		}
		if err := t.encUV(e, inner[s.uk]); err != nil {
			return fmt.Errorf("user key %v: %w", s.uk, err)
		}
	}
	return nil
}

// decodeInner reads one key's map; an empty map means no state.
func (t *MapTable[UK, UV]) decodeInner(d *decoder, _ int) (map[UK]UV, bool, error) {
	n, err := d.DecodeMapLen()
	if err != nil {
		return nil, false, err
	}
	if err := d.checkLen(n); err != nil {
		return nil, false, err
	}
	if n <= 0 {
		return nil, false, nil
	}
	inner := make(map[UK]UV, n)
	for range n {
		uk, err := t.decUK(d)
		if err != nil {
			return nil, false, err
		}
		uv, err := t.decUV(d)
		if err != nil {
			return nil, false, err
		}
		if _, dup := inner[uk]; dup {
			return nil, false, fmt.Errorf("duplicate user key %v", uk)
		}
		inner[uk] = uv
	}
	return inner, true, nil
}

// freezeGroups lets snap read groups until it has encoded them (cow.go).
// The task and the encoder each take their own scratch from a pool.
func (t *MapTable[UK, UV]) freezeGroups(snap *AsyncSnapshot, groups []int) frozenEncoder {
	pool := &sync.Pool{New: func() any {
		return &MapTable[UK, UV]{encUK: t.encUK, encUV: t.encUV}
	}}
	return t.core.freeze(snap, groups, valueCodec[map[UK]UV]{enc: func(e *msgpack.Encoder, inner map[UK]UV) error {
		sc := pool.Get().(*MapTable[UK, UV])
		defer pool.Put(sc)
		return sc.encodeInner(e, inner)
	}})
}

func (t *MapTable[UK, UV]) thaw(snap *AsyncSnapshot) { t.core.thaw(snap) }

// trackChanges notes changed keys for incremental snapshots (changes.go);
// a user value that holds references counts as changed when it is read.
func (t *MapTable[UK, UV]) trackChanges(on bool) {
	t.core.trackChanges(on, readsCanChange[UV]())
}

func (t *MapTable[UK, UV]) takeChanges() ([][]string, []bool) { return t.core.takeChanges() }
