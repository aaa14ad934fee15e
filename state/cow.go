package state

import (
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/vmihailenco/msgpack/v5"
)

// cow is a table's side of an AsyncSnapshot: which of its key groups the
// snapshot may still read, and for each such group the encoded value, as it
// was at the barrier, of every key the task touched before the encoder read
// it.
//
// The encoder reads each group's map as it was at the barrier (base) in
// sorted key order, one entry at a time, and publishes under the group's
// gate which key it is reading (progress). The task, before it reads or
// writes a key the encoder has not read yet, saves that key's encoded value;
// the encoder takes the saved value instead of the live one. The task waits
// only when the encoder is reading the very key it wants, and only for that
// entry: the gate is never held across more than one entry's encoding.
//
// The group's map itself: until the encoder starts on the group the task
// changes it in place under the gate (saving the changed keys first, absent
// ones too); from then on the encoder iterates base without the gate, so the
// task changes a copy of it (own).
type cow[V any] struct {
	snap *AsyncSnapshot
	gs   []cowGroup[V] // by key group
	encV func(*msgpack.Encoder, V) error
	eb   encBuf // task-owned scratch for saving one value
}

// cowGroup is a table's copy-on-write state of one key group.
type cowGroup[V any] struct {
	live bool         // task-owned: the task may still reach values the snapshot reads
	own  bool         // task-owned: k.groups[g] is not base, the task changes it without the gate
	base map[string]V // the group's map at the barrier, as the encoder reads it
	pre  *overlay     // saved before the encoder started the group: under the gate until then, read-only after
	post *overlay     // saved after: under the gate
	prog progress     // the encoder's progress through the group, under the gate
}

// progress is how far the encoder got through one group of a table.
type progress struct {
	started bool     // the encoder reads base: the task no longer changes it
	listed  bool     // keys holds every key the encoder will read
	keys    []string // sorted
	pos     int      // keys[:pos] are read
	busy    bool     // the encoder is reading the live value of keys[pos]
}

// overlay holds the values at the barrier of the keys of one group the task
// touched: their encodings appended to buf, or absent.
type overlay struct {
	at  map[string]savedValue
	buf []byte
}

// savedValue is one key's value at the barrier, buf[off:end], or none; or,
// when passed, a key the encoder had read already when the task touched it.
type savedValue struct {
	off, end int
	present  bool
	passed   bool
}

// has reports whether the overlay holds key.
func (ov *overlay) has(key string) bool {
	_, ok := ov.lookup(key)
	return ok
}

// lookup returns the saved value of key.
func (ov *overlay) lookup(key string) (savedValue, bool) {
	if ov == nil {
		return savedValue{}, false
	}
	sv, ok := ov.at[key]
	return sv, ok
}

// freeze makes group list groups of k readable by snap until it has encoded
// them; it returns the function that encodes one of them.
func (k *keyed[V]) freeze(snap *AsyncSnapshot, groups []int, encV func(*msgpack.Encoder, V) error) func(int, *snapScratch) ([]byte, error) {
	c := &cow[V]{snap: snap, gs: make([]cowGroup[V], len(k.groups)), encV: encV}
	for _, g := range groups {
		// A map the task allocates later is its own.
		c.gs[g] = cowGroup[V]{live: true, base: k.groups[g], own: k.groups[g] == nil}
	}
	k.cow = c
	return func(g int, sc *snapScratch) ([]byte, error) { return k.encodeFrozen(c, g, sc) }
}

// saved reports whether the task already kept key of group g from the
// encoder. The task is the only writer of the overlays: no gate needed.
func (c *cow[V]) saved(g int, key string) bool {
	return c.gs[g].pre.has(key) || c.gs[g].post.has(key)
}

// touch is called on the task before key of group g is read or written.
// If the snapshot may still read the key's live value it saves that value,
// once. mapWrite says the caller will change g's map itself (add, remove or
// assign a key): then touch may return g's gate locked, and the caller
// changes the map and unlocks it. The caller reads k.groups[g] after touch:
// touch may replace it with the task's own copy.
func (k *keyed[V]) touch(g int, key string, mapWrite bool) *sync.Mutex {
	c := k.cow
	if c == nil || !c.gs[g].live {
		return nil
	}
	if (!mapWrite || c.gs[g].own) && c.saved(g, key) {
		return nil
	}
	gt := &c.snap.gates[g]
	c.snap.lock(gt)
	if gt.done {
		c.gs[g].live, c.gs[g].pre, c.gs[g].post = false, nil, nil
		gt.mu.Unlock()
		return nil
	}
	if !c.gs[g].prog.started {
		if !c.gs[g].pre.has(key) {
			c.save(gt, &c.gs[g].pre, g, key)
		}
		if mapWrite && !c.gs[g].own {
			return &gt.mu // the encoder waits to start until the map is changed
		}
		gt.mu.Unlock()
		return nil
	}
	c.keepFromEncoder(gt, g, key)
	gt.mu.Unlock()
	if mapWrite && !c.gs[g].own {
		k.groups[g] = maps.Clone(k.groups[g])
		c.gs[g].own = true
	}
	return nil
}

// keepFromEncoder, on the task with g's gate held once the encoder has
// started on g, makes sure the encoder will not read key's live value: it
// has read it already, or it takes the value saved now. If the encoder is
// reading that very value, it waits for that one entry.
func (c *cow[V]) keepFromEncoder(gt *gate, g int, key string) {
	if c.saved(g, key) {
		return
	}
	p := &c.gs[g].prog
	c.snap.waitTask(gt, func() bool { return p.busy && p.keys[p.pos] == key })
	if p.listed && (p.pos >= len(p.keys) || key < p.keys[p.pos]) {
		// Read already, or never to be read (not in the group at the barrier).
		if c.gs[g].post == nil {
			c.gs[g].post = &overlay{at: map[string]savedValue{}}
		}
		c.gs[g].post.at[key] = savedValue{passed: true}
		return
	}
	c.save(gt, &c.gs[g].post, g, key)
}

// save appends key's value at the barrier to the overlay *ovp; g's gate is
// held. An encoding error is kept for the encoder to report: the snapshot
// fails, the task goes on.
func (c *cow[V]) save(gt *gate, ovp **overlay, g int, key string) {
	ov := *ovp
	if ov == nil {
		ov = &overlay{at: map[string]savedValue{}}
		*ovp = ov
	}
	v, present := c.gs[g].base[key]
	sv := savedValue{present: present}
	if present {
		e := c.eb.reset()
		if err := c.encV(e, v); err != nil && gt.err == nil {
			gt.err = fmt.Errorf("state: snapshot key group %d key %q: %w", g, key, err)
		}
		sv.off = len(ov.buf)
		ov.buf = append(ov.buf, c.eb.buf.Bytes()...)
		sv.end = len(ov.buf)
	}
	ov.at[key] = sv
}

// touchRead is touch for an access that changes nothing in the group's map.
func (k *keyed[V]) touchRead(g int, key string) { k.touch(g, key, false) }

// detach is called before the task replaces group g's map as a whole (a
// drop or a restore): the encoder keeps reading the old map, which the task
// can no longer reach, so nothing needs saving any more.
func (k *keyed[V]) detach(g int) {
	if c := k.cow; c != nil {
		c.gs[g].live = false // the overlays stay: the encoder may still read them
	}
}

// encodeFrozen encodes group g as it was at the barrier, with sorted keys
// like snapshot (the same state gives the same bytes). It runs on the
// encoder and holds g's gate for one entry at a time at most.
func (k *keyed[V]) encodeFrozen(c *cow[V], g int, sc *snapScratch) ([]byte, error) {
	gt := &c.snap.gates[g]
	p := &c.gs[g].prog
	gt.mu.Lock()
	if gt.released {
		gt.mu.Unlock()
		return nil, releasedErr(g)
	}
	p.started = true
	pre := c.gs[g].pre // read-only from now on
	gt.mu.Unlock()

	m := c.gs[g].base // its keys change no more: the task changes a copy
	keys := sc.keys[:0]
	defer func() {
		gt.mu.Lock()
		p.keys, p.pos = nil, 0 // all read: the scratch goes to the next table
		gt.mu.Unlock()
		clear(keys)
		sc.keys = keys[:0]
	}()
	for key := range m {
		if !pre.has(key) {
			keys = append(keys, key)
		}
	}
	if pre != nil {
		for key, sv := range pre.at {
			if sv.present {
				keys = append(keys, key)
			}
		}
	}
	slices.Sort(keys)
	gt.mu.Lock()
	p.keys, p.listed = keys, true
	gt.mu.Unlock()
	if len(keys) == 0 {
		return nil, nil
	}

	e := sc.eb.reset()
	if err := e.EncodeMapLen(len(keys)); err != nil {
		return nil, fmt.Errorf("state: snapshot table %q key group %d: %w", k.name, g, err)
	}
	w := e.Writer()
	for i, key := range keys {
		if err := e.EncodeString(key); err != nil {
			return nil, fmt.Errorf("state: snapshot table %q key group %d: %w", k.name, g, err)
		}
		if sv, ok := pre.lookup(key); ok {
			if _, err := w.Write(pre.buf[sv.off:sv.end]); err != nil {
				return nil, fmt.Errorf("state: snapshot table %q key group %d: %w", k.name, g, err)
			}
			continue
		}
		gt.mu.Lock()
		if gt.released {
			gt.mu.Unlock()
			return nil, releasedErr(g)
		}
		if post := c.gs[g].post; post != nil {
			if sv, ok := post.at[key]; ok {
				_, err := w.Write(post.buf[sv.off:sv.end])
				p.pos = i + 1
				gt.mu.Unlock()
				if err != nil {
					return nil, fmt.Errorf("state: snapshot table %q key group %d: %w", k.name, g, err)
				}
				continue
			}
		}
		p.pos, p.busy, gt.busy = i, true, true
		gt.mu.Unlock()
		err := c.encV(e, m[key])
		gt.mu.Lock()
		p.pos, p.busy, gt.busy = i+1, false, false
		gt.wake()
		gt.mu.Unlock()
		if err != nil {
			return nil, fmt.Errorf("state: snapshot table %q key group %d key %q: %w", k.name, g, key, err)
		}
	}
	return sc.eb.bytes(), nil
}

// thaw drops snap's copies on write once the task let go of it; snap is
// released already. A group the encoder had started on may still have its
// map iterated by it: the task goes on with its own copy.
func (k *keyed[V]) thaw(snap *AsyncSnapshot) {
	c := k.cow
	if c == nil || c.snap != snap {
		return
	}
	for g := range c.gs {
		if !c.gs[g].live || c.gs[g].own {
			continue
		}
		gt := &snap.gates[g]
		snap.lock(gt)
		started := c.gs[g].prog.started
		gt.mu.Unlock()
		if started {
			k.groups[g] = maps.Clone(k.groups[g])
		}
	}
	k.cow = nil
}
