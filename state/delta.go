package state

import (
	"fmt"
	"maps"
	"slices"

	"github.com/vmihailenco/msgpack/v5/msgpcode"
)

// A delta blob (version deltaVersion) holds, for each table of its key
// group that changed since the checkpoint it builds on, either the table's
// group whole (full: the same bytes a whole blob holds) or its changed keys
// only, as a msgpack map with sorted keys:
//
//	key -> [value]  the key's value at the barrier
//	key -> nil      the key had no state at the barrier (a tombstone)
//
// A table the delta does not name is unchanged. Restoring a key group is
// its whole blob, then each of its deltas in order.

// deltaKeys are the keys of one table's group that a delta holds, a key
// possibly more than once (changeLog); keys is not changed.
type deltaKeys struct {
	keys []string
}

// split sorts the keys, each once, into those present at the barrier and
// those absent.
func (d *deltaKeys) split(present func(string) bool) (keys, gone []string) {
	all := slices.Compact(slices.Sorted(slices.Values(d.keys)))
	keys = all[:0] // filtered in place: all is a copy
	for _, key := range all {
		if present(key) {
			keys = append(keys, key)
		} else {
			gone = append(gone, key)
		}
	}
	return keys, gone
}

// appendTombstone appends key as deleted.
func appendTombstone(b []byte, key string) []byte {
	return append(appendString(b, key), msgpcode.Nil)
}

// deltaOp is one key of a decoded delta: its new value, or deleted.
type deltaOp[V any] struct {
	key  string
	v    V
	keep bool
}

// stageDelta decodes a delta of group g and returns the function that
// applies it; nothing changes until then.
func (k *keyed[V]) stageDelta(g int, data []byte, decV valueDecoder[V]) (func(), error) {
	if err := k.checkGroup("restore", g); err != nil {
		return nil, err
	}
	var ops []deltaOp[V]
	if len(data) > 0 {
		d := newDecoderOf(data, copyInput)
		n, err := d.DecodeMapLen()
		if err == nil {
			err = d.checkLen(n)
		}
		if err != nil {
			return nil, k.corrupt(g, fmt.Errorf("delta: %w", err))
		}
		ops = make([]deltaOp[V], 0, max(n, 0))
		prev := ""
		for i := range n {
			key, err := d.str()
			if err != nil {
				return nil, k.corrupt(g, fmt.Errorf("delta: %w", err))
			}
			if i > 0 && key <= prev {
				return nil, k.corrupt(g, fmt.Errorf("delta: key %q out of order or twice", key))
			}
			prev = key
			op := deltaOp[V]{key: key}
			if d.r.Len() > 0 && d.data[len(d.data)-d.r.Len()] == msgpcode.Nil { // a tombstone
				if err := d.DecodeNil(); err != nil {
					return nil, k.corrupt(g, fmt.Errorf("delta key %q: %w", key, err))
				}
			} else {
				if m, err := d.DecodeArrayLen(); err != nil || m != 1 {
					return nil, k.corrupt(g, fmt.Errorf("delta key %q: %w", key, errOr(err, "array of %d, want 1", m)))
				}
				if op.v, op.keep, err = decV(d, n-i); err != nil {
					return nil, k.corrupt(g, fmt.Errorf("delta key %q: %w", key, err))
				}
			}
			ops = append(ops, op)
		}
		if d.r.Len() != 0 {
			return nil, k.corrupt(g, fmt.Errorf("delta: %d trailing bytes", d.r.Len()))
		}
	}
	return func() {
		m := k.groups[g]
		if k.cow != nil {
			// A snapshot may still read the group's map: change a copy.
			k.detach(g)
			m = maps.Clone(m)
		}
		if m == nil {
			m = make(map[string]V, len(ops))
		}
		for _, op := range ops {
			if op.keep {
				m[op.key] = op.v
			} else {
				delete(m, op.key)
			}
		}
		if len(m) == 0 {
			m = nil
		}
		k.groups[g] = m
		k.edits[g]++
	}, nil
}

// deltaStager is implemented by the tables that can apply a delta.
type deltaStager interface {
	stageDelta(g int, data []byte) (func(), error)
}

func (t *ValueTable[T]) stageDelta(g int, data []byte) (func(), error) {
	return t.forgetting(t.core.stageDelta(g, data, func(d *decoder, _ int) (*valueSlot[T], bool, error) {
		p := new(valueSlot[T])
		return p, true, t.dec(d, &p.v)
	}))
}

func (t *MapTable[UK, UV]) stageDelta(g int, data []byte) (func(), error) {
	return t.core.stageDelta(g, data, t.decInner)
}

func (t *ListTable[T]) stageDelta(g int, data []byte) (func(), error) {
	return t.core.stageDelta(g, data, t.decList)
}

// stageDelta decodes a delta blob of group g (its entries) and returns the
// function that applies it on top of the group's state; nothing changes
// until then. Tables written whole inside the delta are staged like a
// whole blob's.
func (b *Backend) stageDelta(g int, entries []blobEntry, in keepInput) (func() error, error) {
	commits := make([]func(), 0, len(entries))
	var foreign []blobEntry
	for _, en := range entries {
		_, t, err := b.target(g, en)
		if err != nil {
			return nil, err
		}
		var commit func()
		switch s := t.(type) {
		case deltaStager:
			if en.full {
				commit, err = t.(stager).stageGroup(g, en.data, in)
			} else {
				commit, err = s.stageDelta(g, en.data)
			}
		case stager:
			if en.full {
				commit, err = s.stageGroup(g, en.data, in)
			}
		default:
			if en.full {
				foreign = append(foreign, en)
				continue
			}
		}
		if err != nil {
			return nil, err // names table and group already
		}
		if commit == nil {
			return nil, fmt.Errorf("state: restore key group %d table %q: a delta of a table that takes none: %w", g, en.name, ErrMismatch)
		}
		commits = append(commits, commit)
	}
	return func() error {
		if err := b.Materialise(g); err != nil { // a delta applies to the decoded group
			return err
		}
		for _, en := range foreign {
			// Such a table may keep what it is given; the blob may be the
			// caller's.
			if err := b.tables[b.byName[en.name]].RestoreGroup(g, slices.Clone(en.data)); err != nil {
				return fmt.Errorf("state: restore key group %d table %q: %w", g, en.name, err)
			}
		}
		for _, commit := range commits {
			commit()
		}
		b.markWhole(g)
		return nil
	}, nil
}
