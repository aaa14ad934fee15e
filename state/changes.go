package state

import "slices"

// changeLog is a table's record of the keys it changed (or handed out a
// reference to) since the backend's last snapshot, per key group: what an
// incremental checkpoint writes as a delta.
//
// A key is noted through its mark when it has one (a value table's slot:
// changedMarked), which costs a comparison where a set would cost a hash
// and an insertion, else through the group's set of keys noted without a
// mark (changed). A key noted both ways, or deleted and added again, is
// listed more than once: readers take the list as a multiset
// (deltaKeys.split).
type changeLog struct {
	keys [][]string            // by key group: the keys noted; nil when none changed
	seen []map[string]struct{} // by key group: the keys noted without a mark
	most []bool                // by key group: most of its keys changed, no longer noted (written whole)
	// spare holds the emptied lists of groups that came to count as most
	// changed: nothing reads them after that, so the next group to note a
	// key takes one instead of growing a new list by doubling (where every
	// key changes, that was an allocation and a copy of the list at each
	// doubling, in every group, at every checkpoint).
	spare [][]string
	reads bool   // reads count as changes: values can be changed in place through what a read returns
	last  string // the key noted last without a mark, in lastG: a read-modify-write notes it once
	lastG int
}

// changed notes that key of group g may have a new value (or none).
func (k *keyed[V]) changed(g int, key string) {
	cl := k.changes
	if cl == nil || cl.most[g] || (g == cl.lastG && key == cl.last && cl.seen[g] != nil) {
		return
	}
	m := cl.seen[g]
	if m == nil {
		m = make(map[string]struct{})
		cl.seen[g] = m
	}
	cl.last, cl.lastG = key, g
	if _, ok := m[key]; ok {
		return
	}
	m[key] = struct{}{}
	k.note(g, key)
}

// changedMarked is changed for a key whose mark is *mark: the change epoch
// it was last noted in.
func (k *keyed[V]) changedMarked(g int, key string, mark *uint64) {
	cl := k.changes
	if cl == nil || cl.most[g] || *mark == k.epoch {
		return
	}
	*mark = k.epoch
	k.note(g, key)
}

// note lists key as changed in group g.
func (k *keyed[V]) note(g int, key string) {
	cl := k.changes
	if cl.keys[g] == nil {
		if n := len(cl.spare); n > 0 {
			cl.keys[g], cl.spare = cl.spare[n-1], cl.spare[:n-1]
		}
	}
	cl.keys[g] = append(cl.keys[g], key)
	if n := len(cl.keys[g]); n >= minMostChanged && 2*n > len(k.groups[g]) {
		// The group is written whole anyway (snapChanges.small): stop
		// paying for noting its keys.
		clear(cl.keys[g]) // hold no key strings while spare
		cl.spare = append(cl.spare, cl.keys[g][:0])
		cl.most[g], cl.keys[g], cl.seen[g] = true, nil, nil
	}
}

// minMostChanged is the fewest changed keys that count as most of a group.
const minMostChanged = 64

// trackChanges starts (or stops) noting changed keys; reads says whether
// reads count as changes.
func (k *keyed[V]) trackChanges(on, reads bool) {
	if !on {
		k.changes = nil
		return
	}
	n := len(k.groups)
	k.changes = &changeLog{keys: make([][]string, n), seen: make([]map[string]struct{}, n), most: make([]bool, n), reads: reads}
	k.epoch++ // no mark set before is of this epoch
}

// takeChanges returns the keys changed since the last call, by group, and
// the groups most of whose keys changed (their keys are not listed), and
// starts a new record and change epoch; the result is not touched by the
// table again.
func (k *keyed[V]) takeChanges() ([][]string, []bool) {
	cl := k.changes
	if cl == nil {
		return nil, nil
	}
	keys, most := cl.keys, cl.most
	n := len(k.groups)
	cl.keys, cl.seen, cl.most = make([][]string, n), make([]map[string]struct{}, n), make([]bool, n)
	cl.last, cl.lastG = "", 0
	k.epoch++
	return keys, most
}

// changeTracker is implemented by the tables that can say which keys they
// changed, so that a snapshot can write only those (an incremental
// checkpoint's delta).
type changeTracker interface {
	trackChanges(on bool)
	takeChanges() ([][]string, []bool)
}

// epoch is what changed in a backend between two snapshots: the snapshot
// taken at its end labels it.
type epoch struct {
	id    uint64       // the checkpoint whose snapshot ended it
	keys  [][][]string // by table index, by key group (changeLog.keys); nil for a table that does not track
	most  [][]bool     // by table index, by key group: most keys changed, not listed
	whole []bool       // by key group: replaced as a whole (restored, dropped)
}

// incremental is a backend's change tracking: the epochs not yet known to
// be in a completed checkpoint, oldest first, and the one in progress.
type incremental struct {
	epochs    []*epoch
	whole     []bool // the epoch in progress: groups replaced as a whole
	confirmed uint64 // the newest checkpoint Confirm was told of
}

// TrackChanges makes the backend note, from now on, which keys of which key
// groups change, so that SnapshotAsyncAt can encode a group as a delta on
// the state of the last confirmed checkpoint (AsyncSnapshot.EncodeIncremental).
// Until a checkpoint is confirmed every group is encoded whole.
func (b *Backend) TrackChanges() {
	if b.incr != nil {
		return
	}
	b.incr = &incremental{whole: make([]bool, b.maxParallelism)}
	for _, t := range b.tables {
		if c, ok := t.(changeTracker); ok {
			c.trackChanges(true)
		}
	}
}

// Confirm tells the backend that checkpoint id completed with this
// backend's snapshot of it: the changes up to that snapshot are stored, and
// the next delta starts from there. It is a no-op when changes are not
// tracked.
func (b *Backend) Confirm(id uint64) {
	if b.incr == nil {
		return
	}
	b.incr.confirmed = id
	b.incr.epochs = slices.DeleteFunc(b.incr.epochs, func(e *epoch) bool { return e.id <= id })
}

// markWhole notes that group g was replaced as a whole: its next snapshot
// cannot be a delta.
func (b *Backend) markWhole(g int) {
	if b.incr != nil {
		b.incr.whole[g] = true
	}
}

// closeEpoch ends the epoch in progress at the snapshot of checkpoint id and
// returns the snapshot's view of the changes: every epoch since the last
// confirmed checkpoint.
func (b *Backend) closeEpoch(id uint64) *snapChanges {
	if b.incr == nil {
		return nil
	}
	e := &epoch{id: id, keys: make([][][]string, len(b.tables)), most: make([][]bool, len(b.tables)), whole: b.incr.whole}
	for i, t := range b.tables {
		if c, ok := t.(changeTracker); ok {
			e.keys[i], e.most[i] = c.takeChanges()
		}
	}
	b.incr.whole = make([]bool, b.maxParallelism)
	b.incr.epochs = append(b.incr.epochs, e)
	return &snapChanges{since: b.incr.confirmed, epochs: slices.Clone(b.incr.epochs)}
}

// snapChanges is a snapshot's view of the changes since the last confirmed
// checkpoint; its epochs are no longer written.
type snapChanges struct {
	since  uint64
	epochs []*epoch
	lens   map[int]int // keys of each group at the barrier, summed over the tables
}

// small reports whether at most half the keys of group g changed, counted
// over the tables that track changes (a key listed in two epochs, or noted
// two ways, counts twice): otherwise a delta would be about as large as the
// group and it is written whole.
func (sc *snapChanges) small(g int) bool {
	changed := 0
	for i := range sc.epochs[len(sc.epochs)-1].keys {
		for _, e := range sc.epochs {
			if e.most[i] != nil && e.most[i][g] {
				return false
			}
			if e.keys[i] != nil {
				changed += len(e.keys[i][g])
			}
		}
	}
	return 2*changed <= sc.lens[g]
}

// deltaPossible reports whether group g can be encoded as a delta: no
// epoch replaced it as a whole.
func (sc *snapChanges) deltaPossible(g int) bool {
	if sc == nil || sc.since == 0 {
		return false
	}
	for _, e := range sc.epochs {
		if e.whole[g] {
			return false
		}
	}
	return true
}

// keys returns the keys of table index i in group g changed since the last
// confirmed checkpoint, a key possibly more than once; the result must not
// be changed.
func (sc *snapChanges) keys(i, g int) []string {
	var one []string
	n := 0
	for _, e := range sc.epochs {
		if e.keys[i] == nil {
			continue
		}
		if l := e.keys[i][g]; len(l) > 0 {
			one = l
			n++
		}
	}
	if n <= 1 {
		return one
	}
	var all []string
	for _, e := range sc.epochs {
		if e.keys[i] != nil {
			all = append(all, e.keys[i][g]...)
		}
	}
	return all
}

// readsCanChange reports whether a value of type T that a read hands out
// can be changed in place (anything but an immutable scalar): a read of it
// then counts as a change.
func readsCanChange[T any]() bool {
	if _, isBytes := any(*new(T)).([]byte); isBytes {
		return true
	}
	return scalarDecoderFor[T]() == nil
}
