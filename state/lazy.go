package state

import (
	"errors"
	"fmt"
	"sync"
)

// lazyGroups is a backend's key groups restored by RestoreGroupsLazy whose
// value, map and list tables are still encoded: each such table keeps the
// group's bytes (lazyCore.enc) until the group is decoded, on the task when
// it first needs the group (Materialise, or any table access) or ahead of
// it by the decoder goroutine (DecodeInBackground).
//
// The decoder only decodes: it stages a group's maps (slot.commits) without
// touching the tables, and the task installs them. So the tables stay the
// task's alone, and a group is pending exactly while the task has not
// installed it (pending, task-owned).
type lazyGroups struct {
	b       *Backend
	pending []bool // task-owned, by key group: still encoded
	left    int    // task-owned: groups pending
	slots   []lazySlot
	worker  *lazyWorker // the decoder goroutine, until joined
	// beforeDecode, when set, runs on the decoder before it decodes group
	// g (tests use it to hold the decoder at a group).
	beforeDecode func(g int)
}

// lazySlot is one pending group, shared between the task and the decoder.
type lazySlot struct {
	mu     sync.Mutex
	phase  lazyPhase
	woken  chan struct{} // closed when the decoder leaves lazyDecoding; made by a waiter
	tables []lazyPart    // task-written before the decoder starts, then read-only
	// commits install the group's decoded maps; staged by the decoder
	// (phase lazyStaged), with the decoder's error if it failed.
	commits []func()
	err     error
}

// lazyPart is one table's encoded part of a pending group.
type lazyPart struct {
	core  *lazyCore
	table stager
	name  string
	data  []byte
}

// lazyPhase is where a pending group is.
type lazyPhase uint8

const (
	lazyEncoded  lazyPhase = iota // nobody decodes it yet
	lazyDecoding                  // the decoder decodes it
	lazyStaged                    // the decoder staged it (or failed: err)
	lazyTaken                     // the task took it (installs it or dropped it)
)

// lazyCore is a table's side of lazy restore: the encoding of each of its
// key groups that is not decoded yet.
type lazyCore struct {
	lz  *lazyGroups
	enc [][]byte // by key group: the table's part of the group's blob while pending; nil once decoded
}

// lazyTable is implemented by the tables whose groups can stay encoded.
type lazyTable interface {
	stager
	lazyState() *lazyCore
}

// encoded returns the encoding of group g when it is pending in this table.
func (c *lazyCore) encoded(g int) []byte {
	if c.enc == nil {
		return nil
	}
	return c.enc[g]
}

// ready decodes group g first if it is still encoded. A decoding error
// panics (with an error naming the group and table): the task reaches a
// table through the operator, which calls Backend.Materialise before, and
// fails there with the error instead.
func (c *lazyCore) ready(g int) {
	if c.enc != nil && c.enc[g] != nil {
		if err := c.lz.materialise(g); err != nil {
			panic(err)
		}
	}
}

// groupLen counts the keys of an encoded table group: the length of its
// msgpack map (a snapshot never writes a key without state).
func groupLen(data []byte) int {
	d := newDecoderOf(data, copyInput)
	n, err := d.DecodeMapLen()
	if err != nil || n < 0 {
		return 0 // cannot happen for bytes a snapshot wrote; decoding reports it
	}
	return n
}

// RestoreGroupsLazy restores key groups as RestoreGroups(blobs, true) does,
// except that it decodes none of their value, map and list tables: it
// checks every blob (checksum, key group, maxParallelism, table names and
// kinds), restores the timer tables and tables implemented elsewhere, and
// keeps each group's other tables encoded, adopting the blobs. A group is
// decoded when the task first needs it: Materialise, any access to one of
// its tables, a rescale's drop or hand-off of it; or before that by
// DecodeInBackground. A snapshot of a group still encoded writes its bytes
// as they are.
//
// Errors of decoding a group surface when it is decoded: from Materialise
// or InstallDecoded (naming the table and key group, wrapping ErrCorrupt as
// RestoreGroups does), or as a panic of a table access that decodes it.
// A blob in delta form is restored at once.
func (b *Backend) RestoreGroupsLazy(blobs []GroupBlob) error {
	if b.lazy != nil && b.lazy.worker != nil {
		// The decoder reads the slots: groups restored while it runs are
		// decoded at once.
		return b.RestoreGroups(blobs, true)
	}
	type checked struct {
		g       int
		entries []blobEntry
		targets []int
	}
	all := make([]checked, 0, len(blobs))
	for _, gb := range blobs {
		g := gb.Group
		if err := b.checkGroup("restore", g); err != nil {
			return err
		}
		h, entries, err := decodeBlob(gb.Blob, blobCRC{known: gb.CRCKnown, sum: gb.CRC})
		if err != nil {
			return fmt.Errorf("state: restore key group %d: %w", g, err)
		}
		if h.group != g {
			return fmt.Errorf("state: restore key group %d: blob holds key group %d: %w", g, h.group, ErrMismatch)
		}
		if h.maxParallelism != b.maxParallelism {
			return fmt.Errorf("state: restore key group %d: blob has maxParallelism %d, backend %d: %w",
				g, h.maxParallelism, b.maxParallelism, ErrMismatch)
		}
		if h.delta {
			if err := b.RestoreGroups([]GroupBlob{gb}, true); err != nil {
				return err
			}
			continue
		}
		c := checked{g: g, entries: entries, targets: make([]int, len(entries))}
		for j, en := range entries {
			if c.targets[j], _, err = b.target(g, en); err != nil {
				return err
			}
		}
		all = append(all, c)
	}
	// Every blob is sound as far as can be told without decoding: the
	// tables that are not kept encoded are staged now, then all installed.
	commits := make([]func() error, len(all))
	for i, c := range all {
		var eager []blobEntry
		for j, en := range c.entries {
			if _, ok := b.tables[c.targets[j]].(lazyTable); !ok || len(en.data) == 0 {
				eager = append(eager, en)
			}
		}
		commit, err := b.stageEntries(c.g, eager, adoptInput)
		if err != nil {
			return err
		}
		commits[i] = commit
	}
	lz := b.lazyGroups()
	for i, c := range all {
		if err := commits[i](); err != nil { // drops the group from every table, installs the eager ones
			return err
		}
		var parts []lazyPart
		for j, en := range c.entries {
			if lt, ok := b.tables[c.targets[j]].(lazyTable); ok && len(en.data) > 0 {
				lc := lt.lazyState()
				if lc.enc == nil {
					lc.lz, lc.enc = lz, make([][]byte, b.maxParallelism)
				}
				lc.enc[c.g] = en.data
				parts = append(parts, lazyPart{core: lc, table: lt, name: en.name, data: en.data})
			}
		}
		if len(parts) == 0 {
			continue
		}
		lz.slots[c.g] = lazySlot{tables: parts}
		lz.pending[c.g] = true
		lz.left++
	}
	return nil
}

// lazyGroups returns the backend's lazy restore state, made on first use.
func (b *Backend) lazyGroups() *lazyGroups {
	if b.lazy == nil {
		b.lazy = &lazyGroups{b: b, pending: make([]bool, b.maxParallelism), slots: make([]lazySlot, b.maxParallelism)}
	}
	return b.lazy
}

// Encoded returns the number of key groups still encoded (restored by
// RestoreGroupsLazy and not decoded yet).
func (b *Backend) Encoded() int {
	if b.lazy == nil {
		return 0
	}
	return b.lazy.left
}

// Materialise decodes key group g now if it is still encoded, waiting for
// the decoder if it is decoding g, and installs it; the task calls it before
// handing g's state to user code. It returns the group's decoding error,
// and the same error again on later calls.
func (b *Backend) Materialise(g int) error {
	if lz := b.lazy; lz != nil && lz.pending[g] {
		return lz.materialise(g)
	}
	return nil
}

// stage decodes the tables of slot s of group g, adopting their bytes when
// in says so.
func (s *lazySlot) stage(g int, in keepInput) ([]func(), error) {
	commits := make([]func(), 0, len(s.tables))
	for _, p := range s.tables {
		commit, err := p.table.stageGroup(g, p.data, in)
		if err != nil {
			return nil, fmt.Errorf("state: decode key group %d table %q restored earlier: %w", g, p.name, err)
		}
		commits = append(commits, commit)
	}
	return commits, nil
}

// take waits while the decoder decodes group g and takes the slot from it:
// its staged commits (nil when the decoder did not get to it) and error.
func (lz *lazyGroups) take(g int) ([]func(), error, lazyPhase) {
	s := &lz.slots[g]
	s.mu.Lock()
	for s.phase == lazyDecoding {
		if s.woken == nil {
			s.woken = make(chan struct{})
		}
		ch := s.woken
		s.mu.Unlock()
		<-ch
		s.mu.Lock()
	}
	phase, commits, err := s.phase, s.commits, s.err
	if phase != lazyStaged || err == nil {
		s.phase, s.commits = lazyTaken, nil
	}
	s.mu.Unlock()
	return commits, err, phase
}

// materialise decodes pending group g (or takes what the decoder staged)
// and installs it, on the task.
func (lz *lazyGroups) materialise(g int) error {
	commits, err, phase := lz.take(g)
	if err != nil {
		return err // sticky: the slot keeps it
	}
	// A snapshot that holds g encoded reads the bytes until it has encoded
	// g: the installed state must not point into them then (values can be
	// changed in place), so g is decoded again, copying.
	in := adoptInput
	if lz.b.pending != nil && lz.b.pending.holdsEncoded(g) {
		in, commits = copyInput, nil
	}
	if phase != lazyStaged || commits == nil {
		s := &lz.slots[g]
		if commits, err = s.stage(g, in); err != nil {
			s.mu.Lock()
			s.phase, s.err = lazyStaged, err
			s.mu.Unlock()
			return err
		}
	}
	lz.forget(g)
	for _, commit := range commits {
		commit()
	}
	return nil
}

// forget marks group g decoded in every table, before its state is
// installed or dropped; the task holds the slot (lazyTaken).
func (lz *lazyGroups) forget(g int) {
	s := &lz.slots[g]
	for _, p := range s.tables {
		p.core.enc[g] = nil
	}
	s.tables = nil
	lz.pending[g] = false
	lz.left--
}

// discard forgets pending group g without decoding it, before the task
// replaces or drops the group; it waits if the decoder is decoding g.
func (lz *lazyGroups) discard(g int) {
	if lz == nil || !lz.pending[g] {
		return
	}
	lz.take(g)
	lz.forget(g)
}

// lazyWorker is the goroutine that decodes pending groups in order.
type lazyWorker struct {
	stop chan struct{}
	done chan struct{}
}

// DecodeInBackground starts a goroutine that decodes the groups still
// encoded, in ascending order, staging each for the task; when it has
// staged all of them (or one failed to decode) it calls staged, on its own
// goroutine, and ends. The task then installs them with InstallDecoded. A
// group the task needs before is decoded by the task (or waited for, if the
// goroutine is decoding it). StopDecoding stops the goroutine and waits for
// it; the backend's owner calls it when it stops. It returns false, and
// starts nothing, when no group is encoded or a decoder runs already.
func (b *Backend) DecodeInBackground(staged func()) bool {
	lz := b.lazy
	if lz == nil || lz.left == 0 || lz.worker != nil {
		return false
	}
	var order []int
	for g, p := range lz.pending {
		if p {
			order = append(order, g)
		}
	}
	w := &lazyWorker{stop: make(chan struct{}), done: make(chan struct{})}
	lz.worker = w
	hook := lz.beforeDecode
	go func() {
		defer close(w.done)
		for _, g := range order {
			select {
			case <-w.stop:
				return
			default:
			}
			if !lz.decode(g, hook) {
				break // failed: the task finds the error
			}
		}
		staged()
	}()
	return true
}

// decode decodes group g on the decoder goroutine unless the task took it,
// and stages the result; false when it failed.
func (lz *lazyGroups) decode(g int, hook func(int)) bool {
	s := &lz.slots[g]
	s.mu.Lock()
	if s.phase != lazyEncoded {
		s.mu.Unlock()
		return true
	}
	s.phase = lazyDecoding
	s.mu.Unlock()
	if hook != nil {
		hook(g)
	}
	commits, err := s.stage(g, adoptInput)
	s.mu.Lock()
	s.phase, s.commits, s.err = lazyStaged, commits, err
	if s.woken != nil {
		close(s.woken)
		s.woken = nil
	}
	s.mu.Unlock()
	return err == nil
}

// StopDecoding stops the goroutine DecodeInBackground started, if any, and
// waits for it to end (it finishes the group it is decoding). Groups it did
// not decode stay encoded; it is a no-op when none runs.
func (b *Backend) StopDecoding() {
	if b.lazy == nil || b.lazy.worker == nil {
		return
	}
	w := b.lazy.worker
	close(w.stop)
	<-w.done
	b.lazy.worker = nil
}

// InstallDecoded installs every group the background decoder staged, once
// it called staged, and joins it; it decodes on the task any group still
// encoded. It returns the first decoding error, naming the group and table.
func (b *Backend) InstallDecoded() error {
	lz := b.lazy
	if lz == nil {
		return nil
	}
	if w := lz.worker; w != nil {
		<-w.done
		lz.worker = nil
	}
	for g, p := range lz.pending {
		if p {
			if err := lz.materialise(g); err != nil {
				return err
			}
		}
	}
	return nil
}

// errStillEncoded is what encoding a delta of a group still encoded would
// need: its decoded keys. Deltas of such groups write the table whole.
var errStillEncoded = errors.New("key group still encoded")

// copyEncoded is a frozen table's encoder for group g, still encoded at the
// barrier: its encoding, copied into eb while the task cannot release the
// snapshot (gate.reading), so that the task may decode the group and change
// values in place once the snapshot is done with it.
func copyEncoded(gt *gate, g int, enc []byte, eb *encBuf, delta *deltaKeys) ([]byte, error) {
	if delta != nil {
		return nil, fmt.Errorf("state: snapshot key group %d as a delta: %w", g, errStillEncoded)
	}
	gt.reading.Store(true) // before checking stop: Release sees one or the other
	if gt.stop.Load() {
		gt.reading.Store(false)
		gt.wakeUnlocked()
		return nil, releasedErr(g)
	}
	eb.reset()
	eb.buf.Write(enc)
	gt.reading.Store(false)
	gt.wakeUnlocked()
	return eb.buf.Bytes(), nil
}

// encodedAt reports whether group g was still encoded when s was taken.
func (s *AsyncSnapshot) encodedAt(g int) bool { return s.encoded != nil && s.encoded[g] }

// holdsEncoded reports whether s took group g still encoded and may still
// read its encoding, on the task.
func (s *AsyncSnapshot) holdsEncoded(g int) bool {
	if !s.encodedAt(g) {
		return false
	}
	gt := &s.gates[g]
	s.lock(gt)
	defer gt.mu.Unlock()
	return !gt.done
}

func (t *ValueTable[T]) lazyState() *lazyCore    { return &t.core.lazy }
func (t *MapTable[UK, UV]) lazyState() *lazyCore { return &t.core.lazy }
func (t *ListTable[T]) lazyState() *lazyCore     { return &t.core.lazy }

var (
	_ lazyTable = (*ValueTable[int])(nil)
	_ lazyTable = (*MapTable[string, int])(nil)
	_ lazyTable = (*ListTable[int])(nil)
)
