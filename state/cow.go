package state

import (
	"fmt"
	"slices"
	"sync"

	"github.com/vmihailenco/msgpack/v5"
)

// cow is a table's side of an AsyncSnapshot: which of its key groups the
// snapshot may still read, and for each such group the encoded value, as it
// was at the barrier, of every key the task touched since.
//
// The task, before it reads or writes a key of a group the snapshot has not
// encoded yet, saves the key's encoded value (or its absence) under the
// group's gate; the encoder, holding the same gate, iterates the live group
// and takes a saved value in place of the live one. A key the task touched is
// never read live by the encoder, so values the task changes in place (a
// slice inside a value) need no lock; the group's map itself changes only
// under the gate while the snapshot may read it.
type cow[V any] struct {
	snap  *AsyncSnapshot
	live  []bool // task-owned: group g may still be read by the snapshot
	saved []*overlay
	encV  func(*msgpack.Encoder, V) error
	eb    encBuf // task-owned scratch for saving one value
}

// overlay holds the values at the barrier of the keys of one group the task
// touched since: their encodings appended to buf, or absent.
type overlay struct {
	at  map[string]savedValue
	buf []byte
}

// savedValue is one key's value at the barrier: buf[off:end], or none.
type savedValue struct {
	off, end int
	present  bool
}

// freeze makes group list groups of k readable by snap until it has encoded
// them; it returns the function that encodes one of them.
func (k *keyed[V]) freeze(snap *AsyncSnapshot, groups []int, encV func(*msgpack.Encoder, V) error) func(int, *snapScratch) ([]byte, error) {
	c := &cow[V]{snap: snap, live: make([]bool, len(k.groups)), saved: make([]*overlay, len(k.groups)), encV: encV}
	for _, g := range groups {
		c.live[g] = true
	}
	k.cow = c
	return func(g int, sc *snapScratch) ([]byte, error) { return k.encodeFrozen(c, g, sc) }
}

// touch is called on the task before key of group g is read or written.
// If the snapshot may still read g it saves the key's value at the barrier,
// once. mapWrite says the caller will change g's map itself (add, remove or
// assign a key): then touch returns g's gate locked, and the caller changes
// the map and unlocks it. Otherwise it returns nil, and a key already saved
// costs no lock: the encoder reads its saved value, never the live one, so
// the task may change that value in place.
func (k *keyed[V]) touch(g int, key string, mapWrite bool) *sync.Mutex {
	c := k.cow
	if c == nil || !c.live[g] {
		return nil
	}
	if !mapWrite {
		// The task is the only writer of the overlay, and writes it under the
		// gate: reading it here races with nothing.
		if ov := c.saved[g]; ov != nil {
			if _, ok := ov.at[key]; ok {
				return nil
			}
		}
	}
	gt := &c.snap.gates[g]
	c.snap.lock(gt)
	if gt.done {
		gt.mu.Unlock()
		c.live[g], c.saved[g] = false, nil
		return nil
	}
	ov := c.saved[g]
	if ov == nil {
		ov = &overlay{at: map[string]savedValue{}}
		c.saved[g] = ov
	}
	if _, ok := ov.at[key]; !ok {
		v, present := k.groups[g][key]
		sv := savedValue{present: present}
		if present {
			e := c.eb.reset()
			if err := c.encV(e, v); err != nil {
				// Kept for the encoder to report: the snapshot fails, the task goes on.
				gt.err = fmt.Errorf("state: snapshot table %q key group %d key %q: %w", k.name, g, key, err)
			}
			sv.off = len(ov.buf)
			ov.buf = append(ov.buf, c.eb.buf.Bytes()...)
			sv.end = len(ov.buf)
		}
		ov.at[key] = sv
	}
	if !mapWrite {
		gt.mu.Unlock()
		return nil
	}
	return &gt.mu
}

// touchRead is touch for an access that changes nothing in the group's map.
func (k *keyed[V]) touchRead(g int, key string) { k.touch(g, key, false) }

// settle makes sure the snapshot no longer reads group g: if it has not
// encoded g yet, the task encodes it now. Called before the whole group is
// replaced, dropped or iterated.
func (k *keyed[V]) settle(g int) {
	c := k.cow
	if c == nil || !c.live[g] {
		return
	}
	c.snap.settle(g)
	c.live[g], c.saved[g] = false, nil
}

// encodeFrozen encodes group g as it was at the barrier, with sorted keys
// like snapshot (the same state gives the same bytes). The caller holds g's
// gate.
func (k *keyed[V]) encodeFrozen(c *cow[V], g int, sc *snapScratch) ([]byte, error) {
	m := k.groups[g]
	ov := c.saved[g] // the task drops it once it sees g done
	keys := sc.keys[:0]
	defer func() {
		clear(keys)
		sc.keys = keys[:0]
	}()
	for key := range m {
		if ov != nil {
			if _, touched := ov.at[key]; touched {
				continue
			}
		}
		keys = append(keys, key)
	}
	if ov != nil {
		for key, sv := range ov.at {
			if sv.present {
				keys = append(keys, key)
			}
		}
	}
	if len(keys) == 0 {
		return nil, nil
	}
	slices.Sort(keys)
	e := sc.eb.reset()
	if err := e.EncodeMapLen(len(keys)); err != nil {
		return nil, fmt.Errorf("state: snapshot table %q key group %d: %w", k.name, g, err)
	}
	w := e.Writer()
	for _, key := range keys {
		if err := e.EncodeString(key); err != nil {
			return nil, fmt.Errorf("state: snapshot table %q key group %d: %w", k.name, g, err)
		}
		if ov != nil {
			if sv, touched := ov.at[key]; touched {
				if _, err := w.Write(ov.buf[sv.off:sv.end]); err != nil {
					return nil, fmt.Errorf("state: snapshot table %q key group %d: %w", k.name, g, err)
				}
				continue
			}
		}
		if err := c.encV(e, m[key]); err != nil {
			return nil, fmt.Errorf("state: snapshot table %q key group %d key %q: %w", k.name, g, key, err)
		}
	}
	return sc.eb.bytes(), nil
}

// thaw drops snap's copies on write once the task let go of it.
func (k *keyed[V]) thaw(snap *AsyncSnapshot) {
	if k.cow != nil && k.cow.snap == snap {
		k.cow = nil
	}
}
