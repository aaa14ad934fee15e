package state

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// ErrSnapshotReleased is an AsyncSnapshot encoded after its task let go of
// it (the checkpoint was aborted).
var ErrSnapshotReleased = errors.New("state: snapshot released before it was encoded")

// ErrSnapshotAppended is a key group of an AsyncSnapshot encoded again
// after EncodeAppend wrote it into the caller's buffer, which the snapshot
// does not keep.
var ErrSnapshotAppended = errors.New("state: snapshot key group already appended to a caller's buffer")

// AsyncSnapshot is a consistent view of a Backend's key groups at a barrier
// that is encoded later, on any goroutine, while the task goes on changing
// the state: Backend.SnapshotAsync takes it in time proportional to the
// number of key groups, not to the state. Tables of this package keep the
// values at the barrier of the keys the task touches before the snapshot
// has encoded their group (copy on write per key); other tables are encoded
// at the barrier.
//
// Encode may run on another goroutine than the task's; Release and every
// call on the Backend stay on the task's.
type AsyncSnapshot struct {
	maxParallelism int
	groups         []int
	gates          []gate // by key group
	tables         []frozenTable
	taskScratch    snapScratch  // for groups the task encodes itself
	scratch        *scratchKeep // the backend's scratch for the encoder (Encode, EncodeStream, …)
	maxWait        atomic.Int64 // longest the task waited for a gate, ns
	changes        *snapChanges // what changed since the last confirmed checkpoint; nil when not tracked
	encoded        []bool       // by key group: still encoded at the barrier (lazy.go); nil when none was
}

// gate guards one key group between the task and the encoder. The encoder
// takes its lock only to change phase (start a table of the group, publish
// its keys, finish the group) and to wake waiters, never across an entry's
// encoding: entries are claimed with atomics (cow.go).
type gate struct {
	mu       sync.Mutex
	woken    chan struct{} // closed to wake the waiters; made by the first, under mu
	waiters  atomic.Int32  // goroutines waiting, or about to
	reading  atomic.Bool   // the encoder is reading a live value of the group
	stop     atomic.Bool   // released: the encoder reads no more live values
	claimed  bool          // a goroutine is encoding the group
	done     bool          // encoded (or released): the snapshot reads the group no more
	finished atomic.Bool   // done, for the task to read without mu
	released bool          // done without a blob
	appended bool          // done, its blob written into a caller's buffer and not kept
	blob     []byte        // the group's blob once done
	delta    bool          // blob is a delta (delta.go)
	sums     groupSums     // of blob, once done
	err      error         // encoding failed (also set by the task's copy on write)
}

// wait waits, with mu held, until the gate is woken; mu is held again on
// return. The caller counts itself in waiters.
func (gt *gate) wait() {
	if gt.woken == nil {
		gt.woken = make(chan struct{})
	}
	ch := gt.woken
	gt.mu.Unlock()
	<-ch
	gt.mu.Lock()
}

// waitWhile waits on the gate until blocked no longer holds; mu is not
// held. blocked reads atomics that the other side changes before it calls
// wakeUnlocked.
func (gt *gate) waitWhile(blocked func() bool) {
	gt.mu.Lock()
	gt.waiters.Add(1) // before checking: whoever changes the atomics sees us
	for blocked() {
		gt.wait()
	}
	gt.waiters.Add(-1)
	gt.mu.Unlock()
}

// wake wakes the gate's waiters, if any; mu is held.
func (gt *gate) wake() {
	if gt.woken != nil {
		close(gt.woken)
		gt.woken = nil
	}
}

// wakeUnlocked is wake for a caller without mu, after it changed an atomic
// a waiter checks.
func (gt *gate) wakeUnlocked() {
	if gt.waiters.Load() > 0 {
		gt.mu.Lock()
		gt.wake()
		gt.mu.Unlock()
	}
}

// releasedErr is the error of encoding group g after Release.
func releasedErr(g int) error {
	return fmt.Errorf("state: snapshot key group %d: %w", g, ErrSnapshotReleased)
}

// frozenTable is one table's part of a snapshot: an encoder of a frozen
// group, or the group's bytes taken at the barrier.
type frozenTable struct {
	name   string
	kind   Kind
	index  int           // in the backend's tables
	encode frozenEncoder // nil: pre holds the bytes
	pre    map[int][]byte
	preLen map[int]int // with pre: the group's keys at the barrier
}

// frozenEncoder encodes group g of a table as it was at the barrier: whole,
// or, given delta, only those keys (delta.go). The bytes it returns are
// eb's: they hold until eb is reset.
type frozenEncoder func(g int, eb *encBuf, delta *deltaKeys) ([]byte, error)

// snapScratch is the scratch of one goroutine encoding frozen groups,
// reused from group to group: a group's tables are encoded into it and
// copied once, into the group's blob.
type snapScratch struct {
	tables  []*encBuf // by position in the snapshot's tables; pointers: an encBuf's encoder points into it
	blob    encBuf
	entries []blobEntry
	offTask bool // the encoder's, not the task's: it yields (encBuf.yield)
}

// table returns the scratch of the snapshot's i-th table.
func (sc *snapScratch) table(i int) *encBuf {
	for len(sc.tables) <= i {
		sc.tables = append(sc.tables, &encBuf{yield: sc.offTask})
	}
	return sc.tables[i]
}

// cowTable is implemented by the tables that support copy on write.
type cowTable interface {
	freezeGroups(snap *AsyncSnapshot, groups []int) frozenEncoder
	// thaw forgets snap's copies on write.
	thaw(snap *AsyncSnapshot)
}

// SnapshotAsync takes a view of the given key groups (each at most once)
// that Encode turns into the blobs SnapshotGroup would have given at this
// moment. A snapshot still being encoded is completed first, on the
// caller's goroutine: one snapshot is frozen at a time.
func (b *Backend) SnapshotAsync(groups []int) (*AsyncSnapshot, error) {
	return b.SnapshotAsyncAt(0, groups)
}

// SnapshotAsyncAt is SnapshotAsync for the snapshot of checkpoint id: when
// the backend tracks changes (TrackChanges) the snapshot can encode groups
// as deltas on the last confirmed checkpoint (EncodeIncremental).
func (b *Backend) SnapshotAsyncAt(id uint64, groups []int) (*AsyncSnapshot, error) {
	if b.pending != nil {
		b.pending.settleAll()
		b.pending = nil
	}
	if b.scratch == nil {
		b.scratch = &scratchKeep{}
	}
	s := &AsyncSnapshot{maxParallelism: b.maxParallelism, groups: groups, gates: make([]gate, b.maxParallelism), scratch: b.scratch}
	seen := make([]bool, b.maxParallelism)
	for _, g := range groups {
		if err := b.checkGroup("snapshot", g); err != nil {
			return nil, err
		}
		if seen[g] {
			return nil, fmt.Errorf("state: snapshot key group %d listed twice", g)
		}
		seen[g] = true
	}
	if b.lazy != nil && b.lazy.left > 0 {
		s.encoded = slices.Clone(b.lazy.pending)
	}
	s.changes = b.closeEpoch(id)
	if s.changes != nil {
		s.changes.lens = make(map[int]int, len(groups))
		for _, g := range groups {
			s.changes.lens[g] = b.GroupLen(g)
		}
	}
	for _, i := range b.sorted {
		t := b.tables[i]
		ft := frozenTable{name: t.Name(), kind: t.Kind(), index: i}
		if c, ok := t.(cowTable); ok {
			ft.encode = c.freezeGroups(s, groups)
		} else {
			ft.pre = make(map[int][]byte, len(groups))
			ft.preLen = make(map[int]int, len(groups))
			for _, g := range groups {
				ft.preLen[g] = t.Len(g)
				data, err := t.SnapshotGroup(g)
				if err != nil {
					s.releaseTables()
					return nil, fmt.Errorf("state: snapshot key group %d table %q: %w", g, t.Name(), err)
				}
				ft.pre[g] = data
			}
		}
		s.tables = append(s.tables, ft)
	}
	b.pending = s
	return s, nil
}

// releaseTables marks every group done (nothing read any more), on the
// task: an encoder in the middle of a group stops at its next entry, and
// the task waits for the entry it is reading, if any.
func (s *AsyncSnapshot) releaseTables() {
	for _, g := range s.groups {
		gt := &s.gates[g]
		s.lock(gt)
		if !gt.done {
			gt.done, gt.released = true, true
			gt.finished.Store(true)
			gt.stop.Store(true)
			gt.wake()
		}
		gt.mu.Unlock()
		if gt.reading.Load() {
			start := time.Now()
			gt.waitWhile(gt.reading.Load)
			s.noteWait(time.Since(start))
		}
	}
}

// Groups returns the key groups of the snapshot, in the order given.
func (s *AsyncSnapshot) Groups() []int { return s.groups }

// Encode returns the blob of every key group of the snapshot as it was at
// SnapshotAsync. It may run on any goroutine, once or more; the task goes on
// meanwhile. After Release it fails with ErrSnapshotReleased.
func (s *AsyncSnapshot) Encode() (map[int][]byte, error) {
	sc := s.scratch.take()
	defer s.scratch.give(sc)
	out := make(map[int][]byte, len(s.groups))
	for _, g := range s.groups {
		blob, _, err := s.encodeGroup(g, sc, false, false)
		if err != nil {
			return nil, err
		}
		out[g] = blob
	}
	return out, nil
}

// Since is the checkpoint the snapshot's deltas build on: the last one
// Confirm was told of before the snapshot was taken (0: none, every group
// is encoded whole).
func (s *AsyncSnapshot) Since() uint64 {
	if s.changes == nil {
		return 0
	}
	return s.changes.since
}

// EncodeIncremental is Encode that encodes a group as a delta on its state
// at checkpoint Since when useDelta(g) says so and the group was not
// replaced as a whole since (restored, dropped, moved in) and at most half
// its keys changed (a delta would be about as large); deltas reports
// which blobs are deltas. A group encoded whole meanwhile (the next
// snapshot was taken before this one was encoded) stays whole.
func (s *AsyncSnapshot) EncodeIncremental(useDelta func(g int) bool) (blobs map[int][]byte, deltas map[int]bool, err error) {
	sc := s.scratch.take()
	defer s.scratch.give(sc)
	blobs = make(map[int][]byte, len(s.groups))
	deltas = map[int]bool{}
	for _, g := range s.groups {
		want := s.changes.deltaPossible(g) && s.changes.small(g) && useDelta(g)
		blob, delta, err := s.encodeGroup(g, sc, false, want)
		if err != nil {
			return nil, nil, err
		}
		blobs[g] = blob
		if delta {
			deltas[g] = true
		}
	}
	return blobs, deltas, nil
}

// encodeGroup encodes group g unless done, as a delta when delta says so,
// and returns its blob and whether it is a delta. onTask says the caller is
// the task, whose waits are timed. If another goroutine is encoding g it
// waits for it.
func (s *AsyncSnapshot) encodeGroup(g int, sc *snapScratch, onTask, delta bool) ([]byte, bool, error) {
	return s.encodeGroupTo(nil, false, g, sc, onTask, delta)
}

// EncodeAppend is EncodeIncremental (Encode when useDelta is nil) that
// appends each group's blob to dst, in the order of Groups, instead of
// allocating one per group: it returns dst and where each group's blob
// lies in it ([offset, size]). A group the task encoded meanwhile (the next
// snapshot was taken first) is copied in. The snapshot does not keep what
// it appended: encoding those groups again fails with ErrSnapshotAppended.
func (s *AsyncSnapshot) EncodeAppend(dst []byte, useDelta func(g int) bool) (out []byte, sections map[int][2]int64, deltas map[int]bool, err error) {
	sections = make(map[int][2]int64, len(s.groups))
	deltas = map[int]bool{}
	out, err = s.appendGroups(dst, useDelta, func(dst []byte, g, start int, delta bool) []byte {
		sections[g] = [2]int64{int64(start), int64(len(dst) - start)}
		if delta {
			deltas[g] = true
		}
		return dst
	})
	if err != nil {
		return out, nil, nil, err
	}
	return out, sections, deltas, nil
}

// appendGroups appends the blob of every group to dst in the order of
// Groups (EncodeAppend) and hands each to placed, with where it starts in
// dst and whether it is a delta; placed returns dst to go on with. An
// encoding error ends it.
func (s *AsyncSnapshot) appendGroups(dst []byte, useDelta func(g int) bool, placed func(dst []byte, g, start int, delta bool) []byte) ([]byte, error) {
	sc := s.scratch.take()
	defer s.scratch.give(sc)
	for _, g := range s.groups {
		want := useDelta != nil && s.changes.deltaPossible(g) && s.changes.small(g) && useDelta(g)
		start := len(dst)
		var delta bool
		var err error
		if dst, delta, err = s.encodeGroupTo(dst, true, g, sc, false, want); err != nil {
			return dst, err
		}
		dst = placed(dst, g, start, delta)
	}
	return dst, nil
}

// encodeGroupTo is encodeGroup that, appending, appends group g's blob to
// dst and returns dst: encoded straight into it and not kept, or copied
// when the group was encoded already.
func (s *AsyncSnapshot) encodeGroupTo(dst []byte, appending bool, g int, sc *snapScratch, onTask, delta bool) ([]byte, bool, error) {
	gt := &s.gates[g]
	if onTask {
		s.lock(gt)
		s.waitTask(gt, func() bool { return gt.claimed && !gt.done })
	} else {
		gt.mu.Lock()
		for gt.claimed && !gt.done {
			gt.wait()
		}
	}
	defer gt.mu.Unlock()
	if !gt.done {
		gt.claimed = true
		gt.mu.Unlock()
		out, sums, err := s.encodeTables(dst, g, sc, delta) // dst is nil unless appending: a blob of its own
		gt.mu.Lock()
		gt.claimed = false
		if !gt.released {
			if gt.err == nil {
				gt.err = err
			}
			gt.delta, gt.sums, gt.done = delta, sums, true
			gt.finished.Store(true)
			if appending {
				gt.appended = gt.err == nil
			} else {
				gt.blob = out
			}
		}
		gt.wake()
		if appending && gt.appended {
			return out, delta, nil
		}
	}
	switch {
	case gt.released:
		return dst, false, releasedErr(g)
	case gt.err != nil:
		return dst, false, gt.err
	case gt.appended:
		return dst, false, fmt.Errorf("state: snapshot key group %d: %w", g, ErrSnapshotAppended)
	case appending:
		return append(dst, gt.blob...), gt.delta, nil
	}
	return gt.blob, gt.delta, nil
}

// encodeTables appends group g's blob from every table, or its delta blob,
// to dst (nil: a blob of its own), without g's gate: the tables take it
// entry by entry. In a delta a table that tracks changes gives its changed
// keys, or nothing when none changed; any other is written whole. It also
// returns the blob's sums. Appending to a buffer, it encodes the tables'
// parts in place (encodeTablesInPlace).
func (s *AsyncSnapshot) encodeTables(dst []byte, g int, sc *snapScratch, delta bool) ([]byte, groupSums, error) {
	if dst != nil && len(s.tables) <= maxInPlaceTables {
		return s.encodeTablesInPlace(dst, g, sc, delta)
	}
	entries := sc.entries[:0]
	defer func() {
		clear(entries)
		sc.entries = entries[:0]
	}()
	count := 0
	for i, ft := range s.tables {
		var data []byte
		full := true
		switch {
		case ft.encode != nil && delta:
			keys := s.changes.keys(ft.index, g)
			if len(keys) == 0 {
				continue // unchanged
			}
			var dk *deltaKeys
			if !s.encodedAt(g) { // one still encoded is written whole
				full, dk = false, &deltaKeys{keys: keys}
			}
			var err error
			if data, err = ft.encode(g, sc.table(i), dk); err != nil {
				return nil, groupSums{}, err
			}
			count = addEntries(count, data)
		case ft.encode != nil:
			var err error
			if data, err = ft.encode(g, sc.table(i), nil); err != nil {
				return nil, groupSums{}, err
			}
			count = addEntries(count, data)
		default:
			data = ft.pre[g]
			if count >= 0 {
				count += ft.preLen[g]
			}
		}
		if len(data) > 0 || delta {
			// A delta names a table written whole even when it is empty:
			// restoring it empties the table's group.
			entries = append(entries, blobEntry{name: ft.name, kind: ft.kind, data: data, full: full})
		}
	}
	blob, err := appendBlob(dst, &sc.blob, blobHeader{group: g, maxParallelism: s.maxParallelism, delta: delta}, entries)
	if err != nil {
		return dst, groupSums{}, fmt.Errorf("state: snapshot key group %d: %w", g, err)
	}
	return blob, groupSums{entries: count, crc: sealedCRC(blob[len(dst):])}, nil
}

// groupSums is what a snapshot counted of a key group's blob as it encoded
// it.
type groupSums struct {
	entries int    // entries over its tables (keys and tombstones); -1: not known
	crc     uint32 // CRC-32C of the blob, trailer included
}

// addEntries adds to count the entries of a frozen table's encoding (a
// msgpack map, empty when nil); -1 stays -1, and an encoding that is not a
// map makes it -1.
func addEntries(count int, data []byte) int {
	if count < 0 {
		return -1
	}
	if len(data) == 0 {
		return count
	}
	n, ok := readMapLen(data)
	if !ok {
		return -1
	}
	return count + n
}

// Entries reports, for a key group this snapshot has encoded, how many
// entries its blob holds (keys with a value and tombstones, over the
// tables) and how many keys the group held at the barrier: with both, the
// task tells how much of a chain of deltas later deltas overwrote. ok is
// false when the group is not encoded yet, the snapshot does not track
// changes (TrackChanges), or a table's count is not known.
func (s *AsyncSnapshot) Entries(g int) (entries, live int, ok bool) {
	if s.changes == nil || g < 0 || g >= len(s.gates) {
		return 0, 0, false
	}
	gt := &s.gates[g]
	gt.mu.Lock()
	defer gt.mu.Unlock()
	if !gt.done || gt.released || gt.err != nil || gt.sums.entries < 0 {
		return 0, 0, false
	}
	return gt.sums.entries, s.changes.lens[g], true
}

// CRC returns the CRC-32C of key group g's blob (as a store section's
// checksum is computed), known once the snapshot has encoded the group:
// the task need not read the blob again to checksum it.
func (s *AsyncSnapshot) CRC(g int) (uint32, bool) {
	if g < 0 || g >= len(s.gates) {
		return 0, false
	}
	gt := &s.gates[g]
	gt.mu.Lock()
	defer gt.mu.Unlock()
	if !gt.done || gt.released || gt.err != nil {
		return 0, false
	}
	return gt.sums.crc, true
}

// lock takes gt on the task's goroutine, timing the wait when the encoder
// holds it (to change phase or wake a waiter, never while encoding).
func (s *AsyncSnapshot) lock(gt *gate) {
	if gt.mu.TryLock() {
		return
	}
	start := time.Now()
	gt.mu.Lock()
	s.noteWait(time.Since(start))
}

// waitTask waits on gt, held, on the task's goroutine while blocked holds,
// timing the wait.
func (s *AsyncSnapshot) waitTask(gt *gate, blocked func() bool) {
	if !blocked() {
		return
	}
	start := time.Now()
	for blocked() {
		gt.wait()
	}
	s.noteWait(time.Since(start))
}

// noteWait keeps the longest wait of the task; only the task's goroutine
// stores.
func (s *AsyncSnapshot) noteWait(d time.Duration) {
	if int64(d) > s.maxWait.Load() {
		s.maxWait.Store(int64(d))
	}
}

// MaxWait is the longest the task waited for the encoder: for the entry it
// was reading, or, when the next snapshot was frozen before this one was
// encoded, for the group it was encoding. Read it after Encode returned for
// the final figure.
func (s *AsyncSnapshot) MaxWait() time.Duration { return time.Duration(s.maxWait.Load()) }

// settleAll completes the snapshot on the task: it encodes every group no
// goroutine has started, and waits for the one the encoder is encoding.
func (s *AsyncSnapshot) settleAll() {
	for _, g := range s.groups {
		_, _, _ = s.encodeGroup(g, &s.taskScratch, true, false) // an error stays in the gate for Encode
	}
}

// Release lets go of the snapshot on the task's goroutine: the groups not
// encoded yet are not kept any more, and Encode fails with
// ErrSnapshotReleased. Call it when the checkpoint is abandoned.
func (s *AsyncSnapshot) Release(b *Backend) {
	s.releaseTables()
	for _, t := range b.tables {
		if c, ok := t.(cowTable); ok {
			c.thaw(s)
		}
	}
	if b.pending == s {
		b.pending = nil
	}
}
