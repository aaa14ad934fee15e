package state

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"iter"
	"slices"

	"github.com/vmihailenco/msgpack/v5"
)

// keyed is the part every table shares: one lazily allocated map per key
// group, and the per-group snapshot encoding
//
//	msgpack map: key (string, sorted) -> encoded V
//
// Typed tables supply how one V is written and read.
type keyed[V any] struct {
	name   string
	kind   Kind
	groups []map[string]V
	keys   []string // scratch for sorting keys while encoding
	eb     encBuf
	cow    *cow[V] // the asynchronous snapshot that may still read groups (cow.go)
	snaps  uint64  // asynchronous snapshots frozen so far: the last one's cow.seq
	// listed is, by group, the last whole listing of a settled snapshot:
	// the next one reuses it when it still holds (keptListing).
	listed []keptListing[V]
	// edits counts, by group, the changes that may add or remove keys: a
	// key added or removed, the group replaced or dropped. Unchanged from
	// one barrier to the next, the group holds the same keys and, in a
	// value table, the same slots.
	edits []uint64
	// changes notes the keys changed since the last snapshot when the
	// backend checkpoints incrementally (changes.go); nil otherwise.
	changes *changeLog
	// epoch is the change epoch: a key whose mark holds it was noted
	// since the last snapshot (changeLog).
	epoch uint64
	// lazy holds the groups restored and not decoded yet (lazy.go): every
	// access to such a group decodes it first (ready).
	lazy lazyCore
}

// newKeyed returns an empty core; it panics when maxParallelism < 1, which is
// a programming error.
func newKeyed[V any](name string, kind Kind, maxParallelism int) keyed[V] {
	if maxParallelism < 1 {
		panic(fmt.Sprintf("state: table %q: maxParallelism %d < 1", name, maxParallelism))
	}
	return keyed[V]{name: name, kind: kind, groups: make([]map[string]V, maxParallelism), edits: make([]uint64, maxParallelism)}
}

// group returns the map of group g, allocating it on first use; the group
// is decoded first if it is still encoded.
func (k *keyed[V]) group(g int) map[string]V {
	k.lazy.ready(g)
	m := k.groups[g]
	if m == nil {
		m = make(map[string]V)
		k.groups[g] = m
	}
	return m
}

// checkGroup returns ErrGroupRange for a group outside [0, maxParallelism).
func (k *keyed[V]) checkGroup(op string, g int) error {
	if g < 0 || g >= len(k.groups) {
		return fmt.Errorf("state: %s table %q key group %d (maxParallelism %d): %w",
			op, k.name, g, len(k.groups), ErrGroupRange)
	}
	return nil
}

// corrupt wraps a decoding failure of group g with ErrCorrupt.
func (k *keyed[V]) corrupt(g int, err error) error {
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("state: restore table %q key group %d: %w: %w", k.name, g, ErrCorrupt, err)
}

// snapshot encodes group g with sorted keys; nil when the group is empty.
// A group still encoded gives (a copy of) its encoding as restored.
func (k *keyed[V]) snapshot(g int, encV func(*msgpack.Encoder, V) error) ([]byte, error) {
	if err := k.checkGroup("snapshot", g); err != nil {
		return nil, err
	}
	if enc := k.lazy.encoded(g); enc != nil {
		return bytes.Clone(enc), nil
	}
	m := k.groups[g]
	if len(m) == 0 {
		return nil, nil
	}
	keys := k.keys[:0]
	for key := range m {
		keys = append(keys, key)
	}
	slices.Sort(keys)
	defer func() {
		clear(keys) // do not keep deleted keys alive
		k.keys = keys[:0]
	}()
	e := k.eb.reset()
	if err := e.EncodeMapLen(len(keys)); err != nil {
		return nil, fmt.Errorf("state: snapshot table %q key group %d: %w", k.name, g, err)
	}
	for _, key := range keys {
		if err := e.EncodeString(key); err != nil {
			return nil, fmt.Errorf("state: snapshot table %q key group %d: %w", k.name, g, err)
		}
		if err := encV(e, m[key]); err != nil {
			return nil, fmt.Errorf("state: snapshot table %q key group %d key %q: %w", k.name, g, key, err)
		}
	}
	return k.eb.bytes(), nil
}

// valueDecoder reads one value of a key; left counts the entries still to
// decode, this one included. It returns keep=false for values that stand for
// "no state" (an empty inner map or list).
type valueDecoder[V any] func(d *decoder, left int) (v V, keep bool, err error)

// decode parses a snapshot of group g into a fresh map without touching the
// table (so groups decode concurrently); values with keep=false are
// skipped. With adoptInput the map's keys and values point into data.
func (k *keyed[V]) decode(g int, data []byte, in keepInput, decV valueDecoder[V]) (map[string]V, error) {
	if err := k.checkGroup("restore", g); err != nil {
		return nil, err
	}
	if len(data) == 0 {
		return nil, nil
	}
	d := newDecoderOf(data, in)
	r := d.r
	n, err := d.DecodeMapLen()
	if err != nil {
		return nil, k.corrupt(g, err)
	}
	if err := d.checkLen(n); err != nil {
		return nil, k.corrupt(g, err)
	}
	m := make(map[string]V, max(n, 0))
	for i := range n {
		key, err := d.str()
		if err != nil {
			return nil, k.corrupt(g, err)
		}
		v, keep, err := decV(d, n-i)
		if err != nil {
			return nil, k.corrupt(g, fmt.Errorf("key %q: %w", key, err))
		}
		var dup bool
		if keep {
			had := len(m)
			m[key] = v
			dup = len(m) == had
		} else {
			_, dup = m[key]
		}
		if dup {
			return nil, k.corrupt(g, fmt.Errorf("duplicate key %q", key))
		}
	}
	if r.Len() != 0 {
		return nil, k.corrupt(g, fmt.Errorf("%d trailing bytes", r.Len()))
	}
	if len(m) == 0 {
		return nil, nil
	}
	return m, nil
}

// stage decodes data for group g and returns a function that installs it.
func (k *keyed[V]) stage(g int, data []byte, in keepInput, decV valueDecoder[V]) (func(), error) {
	m, err := k.decode(g, data, in, decV)
	if err != nil {
		return nil, err
	}
	return func() {
		k.lazy.ready(g) // a restore of this table alone: the group's other tables first
		k.detach(g)
		k.groups[g] = m
		k.edits[g]++
	}, nil
}

// restore replaces group g with the entries encoded in data.
func (k *keyed[V]) restore(g int, data []byte, decV valueDecoder[V]) error {
	commit, err := k.stage(g, data, copyInput, decV)
	if err != nil {
		return err
	}
	commit()
	return nil
}

// keysOf iterates over the keys of group g in no particular order.
func (k *keyed[V]) keysOf(g int) iter.Seq[string] {
	k.lazy.ready(g)
	m := k.groups[g]
	return func(yield func(string) bool) {
		for key := range m {
			if !yield(key) {
				return
			}
		}
	}
}

// size is the number of keys in group g, counted in its encoding while it
// is encoded (without decoding it).
func (k *keyed[V]) size(g int) int {
	if enc := k.lazy.encoded(g); enc != nil {
		return groupLen(enc)
	}
	return len(k.groups[g])
}

// drop empties group g; a group still encoded is decoded first when only
// this table drops it (Backend.DropGroup forgets the encoding instead).
func (k *keyed[V]) drop(g int) {
	k.lazy.ready(g)
	k.detach(g)
	k.groups[g] = nil
	k.edits[g]++
	if g < len(k.listed) {
		k.listed[g] = keptListing[V]{} // an empty group is not listed again: let its keys go
	}
}
