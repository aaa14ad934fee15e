package state

import (
	"fmt"
	"maps"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"
)

// cow is a table's side of an AsyncSnapshot: which of its key groups the
// snapshot may still read, and for each such group the encoded value, as it
// was at the barrier, of every key the task touched before the encoder read
// it.
//
// The encoder reads each group's map as it was at the barrier (base) in
// sorted key order. Each key it reads has a claim: the encoder claims a key
// to read its live value, the task claims one the encoder has not reached
// to save its value, and whoever comes second uses the other's result. The
// task waits only when the encoder is reading the very key it wants, and
// only for that entry; the encoder never holds the gate while it encodes.
// A value table's values carry their claims (valueSlot): the task claims
// and saves a value there from the barrier on, whatever the encoder's
// phase, without the gate. Other tables' claims are the listing's, which
// exist once the encoder listed the group's keys; before that the task
// saves the value of each key it touches in an overlay, under the group's
// gate, which the encoder takes only to change phase (progress).
//
// The group's map itself: until the encoder starts on the group the task
// changes it in place under the gate (saving the changed keys in the
// overlay first, absent ones too, so that the encoder lists the keys of the
// barrier); from then on the encoder iterates base without the gate, so the
// task changes a copy of it (own).
type cow[V any] struct {
	snap  *AsyncSnapshot
	seq   uint64        // the snapshot's number in its table, from 1: the claims it owns (entryClaim)
	gs    []cowGroup[V] // by key group
	codec valueCodec[V]
	eb    encBuf // task-owned scratch for saving one value with codec.enc
	// saveLen is the length of the task's last saved encoding: the room
	// it asks the arena for before it appends the next (turnArena.room).
	saveLen int
	// arena holds the task's saved encodings; its chunks are the last
	// snapshot's, settled when this one was frozen (freeze).
	arena turnArena
}

// cowGroup is a table's copy-on-write state of one key group.
type cowGroup[V any] struct {
	live  bool           // task-owned: the task may still reach values the snapshot reads
	own   bool           // task-owned: k.groups[g] is not base, the task changes it without the gate
	base  map[string]V   // the group's map at the barrier, as the encoder reads it
	pre   *overlay       // saved before the encoder started the group: under the gate until then, read-only after
	post  *overlay       // saved after: under the gate
	prog  progress       // the encoder's progress through the group
	enc   []byte         // the group's encoding when it was still encoded at the barrier (lazy.go): copied as it is
	prev  keptListing[V] // the table's last whole listing of the group: reused when still exact
	edits uint64         // the group's edits (keyed.edits) at the barrier
	// vals is encoder-owned: by listed key, its value in base. Values that
	// carry their claims (slots) are kept with the listing once every key
	// was encoded (valsKept); other values are zeroed once encoded.
	vals     []V
	valsKept bool

	// What the last snapshot's copy on write of the group leaves for this
	// one to reuse instead of allocating afresh: the overlays' maps
	// (cleared when taken), the listing's claims and the reused listing's
	// values.
	spareMaps   [2]map[string]savedValue
	spareClaims []entryClaim
	spareVals   []V
}

// valueCodec writes a table's values into a snapshot: app appends what enc
// writes, without an encoder (appendFunc); nil when the value type has no
// appender. claim, when not nil, returns the claim a value carries with it
// (a value table's slot): the task and the encoder claim a key there, in
// every phase, instead of in the listing's claims. prefetch, when not nil,
// hints that the memory a value refers to will be read soon (claimsAhead).
type valueCodec[V any] struct {
	enc      func(*msgpack.Encoder, V) error
	app      func([]byte, V) []byte
	claim    func(V) *entryClaim
	prefetch func(V)
}

// keptListing is a group's sorted keys at a settled snapshot's barrier,
// and, when its values carry their claims (value slots, which stay the
// same while the group's keys do), their slots in that order and the
// group's edits at that barrier: a later snapshot whose barrier finds the
// same edits takes keys and slots as they are.
type keptListing[V any] struct {
	keys  []string
	vals  []V
	edits uint64
}

// progress is how far the encoder got through one group of a table.
type progress struct {
	phase atomic.Int32 // phasePending, then phaseListing, phaseListed, phaseRead
	list  *listing     // set before phaseListed is stored
}

// The phases of a table's group in the encoder. The task changes base in
// place (under the gate) only while pending, saves under the gate while
// pending or listing, and claims entries with atomics once listed.
const (
	phasePending int32 = iota // the encoder has not looked at the group
	phaseListing              // it collects base's keys
	phaseListed               // it reads entries, claiming each
	phaseRead                 // it reads the group no more
)

// listing is the encoder's sorted keys of one group and, per key, who
// claimed it (when the values carry no claims of their own: valueCodec).
type listing struct {
	keys   []string
	whole  bool // keys are all the group's keys at the barrier, not a delta's
	claims []entryClaim
}

// entryClaim says who claimed one key's value for the snapshot numbered
// seq (cow.seq): the encoder, to read the live value, or the task, to save
// it first. A claim of another snapshot is free for this one, so claims
// need no clearing from one snapshot to the next.
//
// The saved value is a pointer and a length rather than a slice, so that a
// value table's slot (a 32-byte value, its claim and its change mark) fits
// one 64-byte cache line.
type entryClaim struct {
	word   atomic.Uint64 // seq<<3 | state
	savedP *byte         // the value at the barrier (savedP, savedN), set by the task before it stores claimSaved
	savedN uint32
}

// maxSaved is the longest encoding of one value a claim can hold.
const maxSaved = math.MaxUint32

// setSaved makes b, at most maxSaved bytes, the saved value.
func (cl *entryClaim) setSaved(b []byte) {
	cl.savedP, cl.savedN = unsafe.SliceData(b), uint32(len(b))
}

// saved returns the saved value.
func (cl *entryClaim) saved() []byte { return unsafe.Slice(cl.savedP, cl.savedN) }

// The states of a claim of the snapshot it names.
const (
	claimSaving  uint64 = iota + 1 // the task is saving the value
	claimSaved                     // saved holds the value at the barrier
	claimReading                   // the encoder is reading the live value
	claimRead                      // the encoder has read it
)

// of returns cl's state for snapshot seq, 0 when another snapshot's.
func (cl *entryClaim) of(seq uint64) uint64 {
	if w := cl.word.Load(); w>>3 == seq {
		return w & 7
	}
	return 0
}

// take claims cl for snapshot seq in state st unless it is claimed for
// seq already; it returns the state it found (0: taken).
func (cl *entryClaim) take(seq, st uint64) uint64 {
	for {
		w := cl.word.Load()
		if w>>3 == seq {
			return w & 7
		}
		if cl.word.CompareAndSwap(w, seq<<3|st) {
			return 0
		}
	}
}

// overlay holds the values at the barrier of the keys of one group the task
// touched: their encodings, copied into the cow's arena, or absent.
type overlay struct {
	at map[string]savedValue
}

// savedValue is one key's value at the barrier, its encoding enc, or none.
type savedValue struct {
	enc     []byte
	present bool
}

// known is a key's current value in the task's map when the caller looked
// it up already: touch saves it without looking it up again.
type known[V any] struct {
	v       V
	present bool
	ok      bool
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
func (k *keyed[V]) freeze(snap *AsyncSnapshot, groups []int, codec valueCodec[V]) frozenEncoder {
	k.keepListings()
	k.snaps++
	c := &cow[V]{snap: snap, seq: k.snaps, gs: make([]cowGroup[V], len(k.groups)), codec: codec}
	if old := k.cow; old != nil {
		c.arena = old.arena.next()
	}
	for _, g := range groups {
		if enc := k.lazy.encoded(g); enc != nil {
			c.gs[g] = cowGroup[V]{enc: enc} // the task decodes it for itself (lazyGroups.materialise)
			continue
		}
		// A map the task allocates later is its own.
		c.gs[g] = cowGroup[V]{live: true, base: k.groups[g], own: k.groups[g] == nil}
		if g < len(k.listed) {
			c.gs[g].prev = k.listed[g]
		}
		c.gs[g].edits = k.edits[g]
		c.gs[g].reuse(k.cow, g)
	}
	k.cow = c
	return func(g int, eb *encBuf, delta *deltaKeys) ([]byte, error) { return k.encodeFrozen(c, g, eb, delta) }
}

// reuse takes over what group g of old, the settled snapshot before (or
// nil), allocated for its copy on write, for this snapshot to reuse.
func (cg *cowGroup[V]) reuse(old *cow[V], g int) {
	if old == nil {
		return
	}
	o := &old.gs[g]
	for i, ov := range [2]*overlay{o.pre, o.post} {
		if ov != nil {
			cg.spareMaps[i] = ov.at
		}
	}
	if l := o.prog.list; l != nil {
		cg.spareClaims = l.claims
	}
	if old.codec.claim == nil {
		cg.spareVals = o.vals // slots are kept with the listing instead
	}
}

// newOverlay returns an empty overlay, in one of the maps the last
// snapshot left when there is one.
func (cg *cowGroup[V]) newOverlay() *overlay {
	for i, m := range cg.spareMaps {
		if m != nil {
			cg.spareMaps[i] = nil
			clear(m)
			return &overlay{at: m}
		}
	}
	return &overlay{at: map[string]savedValue{}}
}

// claimsFor returns n claims, the spare ones when there are enough: a
// claim of an earlier snapshot is free for this one.
func (cg *cowGroup[V]) claimsFor(n int) []entryClaim {
	if cap(cg.spareClaims) < n {
		return make([]entryClaim, n)
	}
	cl := cg.spareClaims[:n]
	cg.spareClaims = nil
	return cl
}

// keepListings keeps, from the snapshot frozen before, the sorted keys of
// each group it listed whole, with their slots when values carry their
// claims, for the next snapshot to reuse: the slots as they are when no
// key was added or removed since (keptListing), else the keys once checked
// (reuseListing). That snapshot is settled (SnapshotAsyncAt): its encoder
// published every listing under the group's gate and touches it no more.
// A released one is forgotten at thaw, so its listings are never read.
func (k *keyed[V]) keepListings() {
	old := k.cow
	if old == nil {
		return
	}
	for g := range old.gs {
		p := &old.gs[g].prog
		if p.phase.Load() != phaseRead || p.list == nil || !p.list.whole {
			continue
		}
		if k.listed == nil {
			k.listed = make([]keptListing[V], len(k.groups))
		}
		kl := keptListing[V]{keys: p.list.keys}
		if cg := &old.gs[g]; cg.valsKept {
			kl.vals, kl.edits = cg.vals, cg.edits
		}
		k.listed[g] = kl
	}
}

// reuseListing checks whether prev, sorted distinct keys, are exactly the
// keys group map m held at the barrier, given the overlay pre of the keys
// the task changed in place since then; if so it returns each key's value
// in m, which stays as it is from now on (the task changes a copy). A group
// whose keys stayed the same from one snapshot to the next (values change,
// keys do not) is then listed with one lookup per key instead of a sort.
// Keys added since the barrier make it give up: the listing is rebuilt.
func reuseListing[V any](prev []string, m map[string]V, pre *overlay, spare []V) ([]V, bool) {
	if len(prev) == 0 {
		return nil, false
	}
	n := len(m) // the keys at the barrier: m's, less those added since, plus those deleted since
	if pre != nil {
		for key, sv := range pre.at {
			_, in := m[key]
			switch {
			case in && !sv.present:
				return nil, false
			case !in && sv.present:
				n++
			}
		}
	}
	if n != len(prev) {
		return nil, false
	}
	// Every key of prev held at the barrier and there were as many: prev
	// is the barrier's keys.
	var vals []V
	if cap(spare) >= len(prev) {
		vals = spare[:len(prev)]
	} else {
		vals = make([]V, len(prev))
	}
	for i, key := range prev {
		v, in := m[key]
		if !in {
			if sv, ok := pre.lookup(key); !ok || !sv.present {
				return nil, false
			}
		}
		vals[i] = v
	}
	return vals, true
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
	return k.touchKnown(g, key, mapWrite, known[V]{})
}

// touchKnown is touch given what the caller knows of key's current value.
func (k *keyed[V]) touchKnown(g int, key string, mapWrite bool, kn known[V]) *sync.Mutex {
	c := k.cow
	if c == nil || !c.gs[g].live {
		return nil
	}
	if c.codec.claim != nil && k.touchEntry(g, key, mapWrite, kn) {
		return nil
	}
	cg := &c.gs[g]
	// The task alone writes the overlays: this holds until it saves.
	saved := c.saved(g, key)
	if saved && (!mapWrite || cg.own) {
		return nil
	}
	switch cg.prog.phase.Load() {
	case phaseRead:
		cg.live = false // the overlays stay until the next snapshot: no gate needed
		return nil
	case phaseListed:
		if !saved {
			c.claim(g, key, kn)
		}
		k.ownMap(g, mapWrite)
		return nil
	}
	gt := &c.snap.gates[g]
	c.snap.lock(gt)
	if gt.done {
		cg.live = false
		gt.mu.Unlock()
		return nil
	}
	switch cg.prog.phase.Load() {
	case phasePending:
		if !saved {
			c.save(gt, &cg.pre, g, key, kn)
		}
		if mapWrite && !cg.own {
			return &gt.mu // the encoder waits to start until the map is changed
		}
	case phaseListing:
		if c.codec.claim != nil {
			gt.mu.Unlock()
			return k.touchKnown(g, key, mapWrite, kn) // claimed in its value (touchEntry)
		}
		if !saved {
			c.save(gt, &cg.post, g, key, kn)
		}
	default:
		gt.mu.Unlock()
		return k.touchKnown(g, key, mapWrite, kn) // listed or read meanwhile
	}
	gt.mu.Unlock()
	k.ownMap(g, mapWrite)
	return nil
}

// touchEntry is touchKnown for values that carry their claims
// (valueCodec.claim): the task claims key's value at the barrier in the
// value itself and saves it there, whatever the encoder's phase, without
// the gate. It reports false for a map write to the barrier's map itself
// (pending, not own), which touchKnown does under the gate: the encoder
// lists the group's keys from that map and the overlay.
func (k *keyed[V]) touchEntry(g int, key string, mapWrite bool, kn known[V]) bool {
	c := k.cow
	cg := &c.gs[g]
	switch ph := cg.prog.phase.Load(); {
	case ph == phaseRead || c.snap.gates[g].finished.Load():
		// Read, or never to be: a table the group's delta skipped, a
		// released snapshot. The overlays stay until the next snapshot.
		cg.live = false
		return true
	case ph == phasePending && mapWrite && !cg.own:
		return false
	}
	if v, present := c.atBarrier(g, key, kn); present {
		c.claimEntry(g, key, c.codec.claim(v), v)
	}
	k.ownMap(g, mapWrite)
	return true
}

// ownMap gives the task its own copy of group g's map before it changes the
// map, once the encoder iterates the original without the gate.
func (k *keyed[V]) ownMap(g int, mapWrite bool) {
	if cg := &k.cow.gs[g]; mapWrite && !cg.own && cg.prog.phase.Load() != phasePending {
		k.groups[g] = maps.Clone(k.groups[g])
		cg.own = true
	}
}

// claim, on the task once the encoder listed group g, makes sure the
// encoder will not read key's live value (claimEntry), with the claim the
// listing holds for it. A key the task saved before the encoder listed the
// group is never claimed: the encoder reads the saved value.
func (c *cow[V]) claim(g int, key string, kn known[V]) {
	l := c.gs[g].prog.list
	i, found := slices.BinarySearch(l.keys, key)
	if !found {
		return // not in the group at the barrier: never read
	}
	v, _ := c.atBarrier(g, key, kn) // listed: present
	c.claimEntry(g, key, &l.claims[i], v)
}

// claimEntry, on the task, makes sure the encoder will not read v's live
// value for this snapshot: it has read it already, or the task claims it
// in cl and saves v's encoding there. If the encoder is reading that very
// value, the task waits for that one entry. An encoding error is kept for
// the encoder to report: the snapshot fails, the task goes on.
func (c *cow[V]) claimEntry(g int, key string, cl *entryClaim, v V) {
	switch cl.take(c.seq, claimSaving) {
	case 0:
		enc, err := c.encodeSaved(v)
		if err == nil && uint64(len(enc)) > maxSaved {
			enc, err = nil, fmt.Errorf("value encoded in %d bytes, more than the %d a copy on write holds", len(enc), uint64(maxSaved))
		}
		gt := &c.snap.gates[g]
		if err != nil {
			gt.mu.Lock()
			if gt.err == nil {
				gt.err = fmt.Errorf("state: snapshot key group %d key %q: %w", g, key, err)
			}
			gt.mu.Unlock()
		}
		cl.setSaved(enc)
		cl.word.Store(c.seq<<3 | claimSaved)
		gt.wakeUnlocked()
	case claimReading:
		start := time.Now()
		c.snap.gates[g].waitWhile(func() bool { return cl.of(c.seq) == claimReading })
		c.snap.noteWait(time.Since(start))
	}
}

// save appends key's value at the barrier to the overlay *ovp; g's gate is
// held. An encoding error is kept for the encoder to report: the snapshot
// fails, the task goes on.
func (c *cow[V]) save(gt *gate, ovp **overlay, g int, key string, kn known[V]) {
	ov := *ovp
	if ov == nil {
		ov = c.gs[g].newOverlay()
		*ovp = ov
	}
	v, present := c.atBarrier(g, key, kn)
	sv := savedValue{present: present}
	if present && c.codec.claim != nil && c.codec.claim(v).of(c.seq) == claimSaved {
		// Saved in the value when the task first touched it (touchEntry),
		// before the encoder could claim it: it has changed since.
		sv.enc = c.codec.claim(v).saved()
	} else if present {
		enc, err := c.encodeSaved(v)
		if err != nil && gt.err == nil {
			gt.err = fmt.Errorf("state: snapshot key group %d key %q: %w", g, key, err)
		}
		sv.enc = enc
	}
	ov.at[key] = sv
}

// encodeSaved returns v's encoding in the arena, on the task: appended
// there in place when the value type has an appender, else copied.
func (c *cow[V]) encodeSaved(v V) ([]byte, error) {
	if app := c.codec.app; app != nil {
		b := c.arena.keep(app(c.arena.room(c.saveLen), v))
		c.saveLen = len(b)
		return b, nil
	}
	e := c.eb.reset()
	err := c.codec.enc(e, v)
	return c.arena.bytes(c.eb.buf.Bytes()), err
}

// atBarrier is key's value in group g's map at the barrier, which the task
// has not changed yet: the caller's lookup in its map when that map is
// still the barrier's (not the task's own copy), else a lookup in it.
func (c *cow[V]) atBarrier(g int, key string, kn known[V]) (V, bool) {
	if kn.ok && !c.gs[g].own {
		return kn.v, kn.present
	}
	v, ok := c.gs[g].base[key]
	return v, ok
}

// touchRead is touch for an access that changes nothing in the group's map.
// It counts as a change when the table hands out values that can be
// changed in place.
func (k *keyed[V]) touchRead(g int, key string) {
	k.touchReadKnown(g, key, known[V]{})
}

// touchReadKnown is touchRead given what the caller knows of key's current
// value.
func (k *keyed[V]) touchReadKnown(g int, key string, kn known[V]) {
	if k.changes != nil && k.changes.reads {
		k.changed(g, key)
	}
	k.touchKnown(g, key, false, kn)
}

// detach is called before the task replaces group g's map as a whole (a
// drop or a restore): the encoder keeps reading the old map, which the task
// can no longer reach, so nothing needs saving any more.
func (k *keyed[V]) detach(g int) {
	if c := k.cow; c != nil {
		c.gs[g].live = false // the overlays stay: the encoder may still read them
	}
}

// encodeFrozen encodes group g as it was at the barrier, with sorted keys
// like snapshot (the same state gives the same bytes), or with delta only
// the keys it names (delta.go). It runs on the encoder, claims each entry
// it reads live with an atomic and takes g's gate only to change phase: the
// task never waits for more than the entry being read.
func (k *keyed[V]) encodeFrozen(c *cow[V], g int, eb *encBuf, delta *deltaKeys) ([]byte, error) {
	gt := &c.snap.gates[g]
	cg := &c.gs[g]
	p := &cg.prog
	gt.mu.Lock()
	if gt.released {
		gt.mu.Unlock()
		return nil, releasedErr(g)
	}
	if cg.enc != nil {
		gt.mu.Unlock()
		return copyEncoded(gt, g, cg.enc, eb, delta)
	}
	p.phase.Store(phaseListing)
	pre := cg.pre // read-only from now on
	gt.mu.Unlock()
	defer p.phase.Store(phaseRead)

	m := cg.base // its keys change no more: the task changes a copy
	var keys, gone []string
	var vals []V // by listed key: its value in m, when the listing was reused
	reused := false
	// Slots are kept with a whole listing (keptListing): gathered here
	// unless the kept ones still hold.
	keepSlots := c.codec.claim != nil && delta == nil
	switch {
	case keepSlots && cg.prev.vals != nil && cg.prev.edits == cg.edits:
		vals, reused = cg.prev.vals, true // no key added or removed since: the same keys and slots
	case delta == nil:
		vals, reused = reuseListing(cg.prev.keys, m, pre, cg.spareVals)
		cg.spareVals = nil
		if reused && !keepSlots {
			defer clear(vals) // holds no values once encoded
		}
	}
	switch {
	case reused:
		keys = cg.prev.keys
	case delta != nil:
		keys, gone = delta.split(func(key string) bool {
			if sv, ok := pre.lookup(key); ok {
				return sv.present
			}
			_, ok := m[key]
			return ok
		})
	default:
		keys = make([]string, 0, len(m))
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
	}
	l := &listing{keys: keys, whole: delta == nil}
	if c.codec.claim == nil {
		l.claims = cg.claimsFor(len(keys))
	}
	gt.mu.Lock()
	p.list = l
	p.phase.Store(phaseListed)
	post := cg.post // read-only from now on
	gt.mu.Unlock()
	if len(keys)+len(gone) == 0 {
		return nil, nil
	}

	if keepSlots && !reused {
		vals = make([]V, len(keys)) // gathered as each key is read
	}
	// Appended to eb's raw scratch, kept for the next group.
	b := appendMapLen(eb.raw[:0], len(keys)+len(gone))
	defer func() { eb.raw = b[:0] }()
	value := func(i int) V { // listed key i's value in the barrier's map
		if reused {
			return vals[i]
		}
		v := m[keys[i]]
		if keepSlots {
			vals[i] = v
		}
		return v
	}
	var ahead *claimsAhead[V]
	if c.codec.claim != nil {
		ahead = &claimsAhead[V]{}
	}
	for i, key := range keys {
		if ahead != nil && i%readAhead == 0 {
			ahead.load(&c.codec, keys[i:min(i+readAhead, len(keys))], pre, post, func(j int) V { return value(i + j) })
		}
		// A delta's deleted keys go in sorted order among its present ones.
		for len(gone) > 0 && gone[0] < key {
			b = appendTombstone(b, gone[0])
			gone = gone[1:]
		}
		b = appendString(b, key)
		if delta != nil {
			b = append(b, msgpcode.FixedArrayLow|1) // the key's operations: its value
		}
		saved, err := c.readEntry(gt, l, i, pre, post, func() V {
			if ahead != nil {
				return ahead.vals[i%readAhead]
			}
			return value(i)
		}, func(v V) (err error) {
			b, err = c.appendLive(b, eb, v)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("state: snapshot table %q key group %d key %q: %w", k.name, g, key, err)
		}
		b = append(b, saved...)
		if eb.yield && i%yieldEvery == yieldEvery-1 {
			runtime.Gosched()
		}
	}
	for _, key := range gone {
		b = appendTombstone(b, key)
	}
	if keepSlots {
		// Every listed key's slot, unless a key was saved in an overlay:
		// then a key was added or removed since the barrier, and the next
		// snapshot finds other edits.
		cg.vals, cg.valsKept = vals, true
	} else if reused {
		cg.vals = vals
	}
	return b, nil // copied into the group's blob before eb is used again
}

// appendLive appends v's encoding to b, on the encoder; eb is scratch for
// a value type without an appender.
func (c *cow[V]) appendLive(b []byte, eb *encBuf, v V) ([]byte, error) {
	if app := c.codec.app; app != nil {
		return app(b, v), nil
	}
	err := c.codec.enc(eb.reset(), v)
	return append(b, eb.buf.Bytes()...), err
}

// yieldEvery is how many entries an encoder off the task encodes before it
// lets other goroutines run (runtime.Gosched). The job's goroutines then
// wait for a processor at most as long as that many entries take (tens of
// microseconds), not for the scheduler to preempt the encoder (about 10
// ms), when the snapshot runs beside a job that keeps every core busy.
const yieldEvery = 128

// readEntry, on the encoder, returns the saved value of listed key i, or
// encodes its live value with read after claiming it (nil, err): in the
// value when it carries its claim (valueCodec.claim), else in the listing.
// value gives the key's value in the barrier's map.
func (c *cow[V]) readEntry(gt *gate, l *listing, i int, pre, post *overlay, value func() V, read func(V) error) ([]byte, error) {
	key := l.keys[i]
	if sv, ok := pre.lookup(key); ok {
		return sv.enc, nil
	}
	if sv, ok := post.lookup(key); ok {
		return sv.enc, nil
	}
	var v V
	var cl *entryClaim
	if c.codec.claim != nil {
		// Listed and not saved in an overlay: in the barrier's map.
		if v = value(); c.codec.claim(v) == nil {
			return nil, fmt.Errorf("listed key missing from the group's map")
		}
		cl = c.codec.claim(v)
	} else {
		cl = &l.claims[i]
	}
	gt.reading.Store(true) // before checking stop: Release sees one or the other
	if gt.stop.Load() {
		gt.reading.Store(false)
		gt.wakeUnlocked()
		return nil, ErrSnapshotReleased
	}
	switch cl.take(c.seq, claimReading) {
	case 0:
		if c.codec.claim == nil {
			v = value()
		}
		err := read(v)
		cl.word.Store(c.seq<<3 | claimRead)
		gt.reading.Store(false)
		gt.wakeUnlocked()
		return nil, err
	case claimSaving:
		gt.reading.Store(false)
		gt.waitWhile(func() bool { return cl.of(c.seq) == claimSaving })
	default:
		gt.reading.Store(false)
	}
	// The saved copy is the encoder's now: a slot keeps no arena chunk
	// alive past the snapshot that saved into it.
	saved := cl.saved()
	cl.setSaved(nil)
	return saved, nil
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
		if ph := c.gs[g].prog.phase.Load(); ph == phaseListing || ph == phaseListed {
			k.groups[g] = maps.Clone(k.groups[g])
		}
	}
	k.cow = nil
}
