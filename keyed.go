package weir

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"time"

	"github.com/weirstream/weir/inflight"
	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/keygroups"
	"github.com/weirstream/weir/state"
)

// KeyedStream is a stream partitioned by key: every record of one key goes to the
// instance that owns the key's key group.
type KeyedStream[T any, K keygroups.Key] struct {
	s     Stream[T]
	keyFn func(T) K
}

// KeyBy partitions a stream by the key that keyFn extracts.
func KeyBy[T any, K keygroups.Key](s Stream[T], keyFn func(T) K) KeyedStream[T, K] {
	return KeyedStream[T, K]{s: s, keyFn: keyFn}
}

// upstream feeds a keyed operator: records go to the instance that owns
// their key's key group.
func (ks KeyedStream[T, K]) upstream() upstream {
	up, pool, keyFn := ks.s.up, ks.s.pool, ks.keyFn
	up.partitioner, up.explicit = plan.KeyGroupHash, true
	hash := func(rec T) uint32 { return keygroups.HashKey(keyFn(rec)) }
	up.newWriter = func(cfg plan.WriterConfig) (plan.EdgeWriter, error) {
		return plan.NewWriter(cfg, hash, pool)
	}
	up.groups = func(maxParallelism int) (plan.RecordGroups, error) {
		return inflight.RecordsOf(hash, maxParallelism)
	}
	return up
}

// KeyScope is a context with a current key, which keyed state accessors
// read: the *KeyedContext handed to keyed functions. Only package weir
// implements it.
type KeyScope interface{ scope() *keyedCore }

// keyedCore is the current key and the task's state tables.
type keyedCore struct {
	op     string // the operator, which declared the states in tables
	tables []state.Table
	key    string // canonical key bytes
	group  int
}

// KeyedContext is handed to a keyed process function with each record.
type KeyedContext[K keygroups.Key] struct {
	core     keyedCore
	k        K
	info     TaskInfo
	backend  *state.Backend
	instance int
	et       *eventScope // event time and timers (operators with timers only)
}

func (c *KeyedContext[K]) scope() *keyedCore { return &c.core }

// Key is the current record's key.
func (c *KeyedContext[K]) Key() K { return c.k }

// KeyGroup is the current key's key group.
func (c *KeyedContext[K]) KeyGroup() int { return c.core.group }

// Task says which operator instance is running.
func (c *KeyedContext[K]) Task() TaskInfo { return c.info }

// ProcessFunc is a keyed process function: it sees one record with its key's
// state and emits any number of records.
type ProcessFunc[T any, K keygroups.Key, Out any] func(ctx *KeyedContext[K], rec T, out *Emitter[Out]) error

// Process adds a keyed operator that runs fn for every record with the record's
// key in scope. Declare its state with WithState.
func Process[T any, K keygroups.Key, Out any](ks KeyedStream[T, K], name string, fn ProcessFunc[T, K, Out], opts ...OpOption) Stream[Out] {
	s, keyFn := ks.s, ks.keyFn
	op, cfg := s.g.addOperator(name, plan.KindTransform, opts, ks.upstream())
	op.Keyed = true
	seen := map[string]bool{}
	for i, d := range cfg.states {
		if seen[d.stateName()] {
			s.g.errs = append(s.g.errs, fmt.Errorf("operator %q: state %q declared twice", name, d.stateName()))
		}
		seen[d.stateName()] = true
		if err := d.bind(s.g, name, i); err != nil {
			s.g.errs = append(s.g.errs, err)
		}
	}
	if !slices.ContainsFunc(cfg.states, func(d StateDescriptor) bool { return d.stateName() != timersTable }) {
		s.g.stateless = append(s.g.stateless, name)
	}
	states := cfg.states
	op.New = func(instance int) (plan.Instance, error) {
		return &keyedInstance[T, K, Out]{name: name, fn: fn, keyFn: keyFn, states: states}, nil
	}
	return newStream[Out](s.g, op)
}

// Instance is the index of the running instance (Task().Instance without
// copying the task's info), for per-instance resources such as a Sleeper.
func (c *KeyedContext[K]) Instance() int { return c.instance }

// keyedInstance runs a keyed process function over its key groups' state.
type keyedInstance[T any, K keygroups.Key, Out any] struct {
	name    string
	fn      ProcessFunc[T, K, Out]
	keyFn   func(T) K
	states  []StateDescriptor
	backend *state.Backend
	owners  []int32
	ctx     KeyedContext[K]
	em      Emitter[Out]
	keyBuf  []byte
}

// Open creates the state backend for the key groups this instance owns.
func (t *keyedInstance[T, K, Out]) Open(info plan.TaskInfo) error {
	t.backend = state.NewBackend(info.MaxParallelism)
	for _, d := range t.states {
		if _, err := t.backend.Register(d.newTable(info.MaxParallelism)); err != nil {
			return fmt.Errorf("operator %q: %w", t.name, err)
		}
	}
	if info.Table == nil || len(info.Table.Owners) != info.MaxParallelism {
		return fmt.Errorf("operator %q: no key-group table for %d key groups", t.name, info.MaxParallelism)
	}
	// A copy: a live rescale moves groups in and out (keyed_rescale.go).
	t.owners = slices.Clone(info.Table.Owners)
	t.ctx.info, t.ctx.instance, t.ctx.backend = taskInfoOf(info), info.Instance, t.backend
	t.ctx.core.op = t.name
	for i := 0; i < t.backend.NumTables(); i++ {
		t.ctx.core.tables = append(t.ctx.core.tables, t.backend.Table(i))
	}
	return nil
}

// Close stops the decoding of key groups a restore left encoded, if it
// still runs.
func (t *keyedInstance[T, K, Out]) Close() error {
	if t.backend != nil {
		t.backend.StopDecoding()
	}
	return nil
}

func (t *keyedInstance[T, K, Out]) Finish(plan.Output) error { return nil }

// Process runs fn on every record with its key in scope. A batch from a
// producer on this node brings each record's key group along; one decoded
// from bytes (another node, restored channel state) is hashed here.
func (t *keyedInstance[T, K, Out]) Process(_ int, b plan.Batch, out plan.Output) error {
	t.em.bind(out)
	recs, ok := plan.RecordsOf[T](b)
	if !ok {
		return fmt.Errorf("operator %q: got a batch of %T, want %T records", t.name, b, *new(T))
	}
	var given []uint16
	if grouped, ok := b.(plan.Grouped[T]); ok && len(grouped.Groups) == len(recs) {
		given = grouped.Groups
	}
	groups := keygroups.NewDivisor(uint32(len(t.owners)))
	cur := -1
	return guard(t.name, b, &cur, func() error {
		for i, rec := range recs {
			cur = i
			k := t.keyFn(rec)
			var g int
			if given != nil {
				g = int(given[i])
			} else {
				g = int(groups.Mod(keygroups.HashKey(k)))
			}
			if g >= len(t.owners) || int(t.owners[g]) != t.ctx.instance {
				return fmt.Errorf("operator %q instance %d got a record of key group %d, which it does not own: routing table mismatch",
					t.name, t.ctx.instance, g)
			}
			if err := t.backend.Materialise(g); err != nil {
				return fmt.Errorf("operator %q instance %d: %w", t.name, t.ctx.instance, err)
			}
			t.ctx.k = k
			t.ctx.core.group = g
			t.ctx.core.key = t.keyString(k)
			if err := t.fn(&t.ctx, rec, &t.em); err != nil {
				return &RecordError{Operator: t.name, Record: showRecord(rec), Err: err}
			}
		}
		return nil
	})
}

// keyString is the canonical key as a string: string keys as they are, other
// keys as a copy of their canonical bytes. HashKey(k) equals the hash of
// those bytes, so the key group needs no second encoding.
func (t *keyedInstance[T, K, Out]) keyString(k K) string {
	if s, ok := any(k).(string); ok {
		return s
	}
	t.keyBuf = keygroups.AppendKeyBytes(t.keyBuf[:0], k)
	return string(t.keyBuf)
}

// SnapshotState encodes every key group this instance owns that holds state.
func (t *keyedInstance[T, K, Out]) SnapshotState(id uint64) (plan.Snapshot, error) {
	snap := plan.Snapshot{CheckpointID: id, KeyGroups: map[int][]byte{}}
	for _, g := range t.backend.NonEmptyGroups() {
		blob, err := t.backend.SnapshotGroup(g)
		if err != nil {
			return snap, fmt.Errorf("operator %q: snapshot key group %d: %w", t.name, g, err)
		}
		snap.KeyGroups[g] = blob
	}
	return snap, nil
}

// SnapshotStateAsync freezes every key group this instance owns that holds
// state; the result encodes them on another goroutine (state.AsyncSnapshot).
func (t *keyedInstance[T, K, Out]) SnapshotStateAsync(id uint64) (plan.PendingSnapshot, error) {
	s, err := t.backend.SnapshotAsyncAt(id, t.backend.NonEmptyGroups())
	if err != nil {
		return nil, fmt.Errorf("operator %q: snapshot: %w", t.name, err)
	}
	return &pendingKeyed{name: t.name, id: id, snap: s, backend: t.backend}, nil
}

// pendingKeyed is a keyed instance's snapshot taken at a barrier.
type pendingKeyed struct {
	name    string
	id      uint64
	snap    *state.AsyncSnapshot
	backend *state.Backend
}

func (p *pendingKeyed) Encode() (plan.Snapshot, error) {
	groups, err := p.snap.Encode()
	if err != nil {
		return plan.Snapshot{CheckpointID: p.id}, fmt.Errorf("operator %q: snapshot for checkpoint %d: %w", p.name, p.id, err)
	}
	return plan.Snapshot{CheckpointID: p.id, KeyGroups: groups, KeyGroupCRCs: p.crcs()}, nil
}

// EncodeIncremental encodes the groups useDelta picks as deltas when it can
// (plan.IncrementalPending).
func (p *pendingKeyed) EncodeIncremental(useDelta func(g int) bool) (plan.Snapshot, error) {
	groups, deltas, err := p.snap.EncodeIncremental(useDelta)
	if err != nil {
		return plan.Snapshot{CheckpointID: p.id}, fmt.Errorf("operator %q: snapshot for checkpoint %d: %w", p.name, p.id, err)
	}
	return plan.Snapshot{CheckpointID: p.id, KeyGroups: groups, KeyGroupCRCs: p.crcs(), Deltas: deltas, DeltaSince: p.snap.Since(), Entries: p.entries()}, nil
}

// crcs is the CRC-32C of every key group's blob the snapshot encoded.
func (p *pendingKeyed) crcs() map[int]uint32 {
	out := make(map[int]uint32, len(p.snap.Groups()))
	for _, g := range p.snap.Groups() {
		if crc, ok := p.snap.CRC(g); ok {
			out[g] = crc
		}
	}
	return out
}

// entries counts the entries of every key group the snapshot encoded, when
// it tracks changes (nil otherwise).
func (p *pendingKeyed) entries() map[int]plan.GroupEntries {
	var out map[int]plan.GroupEntries
	for _, g := range p.snap.Groups() {
		if written, live, ok := p.snap.Entries(g); ok {
			if out == nil {
				out = make(map[int]plan.GroupEntries, len(p.snap.Groups()))
			}
			out[g] = plan.GroupEntries{Written: written, Live: live}
		}
	}
	return out
}

// EncodeAppend appends every key group's blob to dst
// (plan.AppendingPending).
func (p *pendingKeyed) EncodeAppend(dst []byte, useDelta func(g int) bool) ([]byte, plan.Snapshot, error) {
	out, sections, deltas, err := p.snap.EncodeAppend(dst, useDelta)
	if err != nil {
		return out, plan.Snapshot{CheckpointID: p.id}, fmt.Errorf("operator %q: snapshot for checkpoint %d: %w", p.name, p.id, err)
	}
	groups := make(map[int][]byte, len(sections))
	for g, s := range sections {
		groups[g] = out[s[0] : s[0]+s[1] : s[0]+s[1]]
	}
	snap := plan.Snapshot{CheckpointID: p.id, KeyGroups: groups, KeyGroupCRCs: p.crcs(), Sections: sections, Deltas: deltas}
	if useDelta != nil {
		snap.DeltaSince, snap.Entries = p.snap.Since(), p.entries()
	}
	return out, snap, nil
}

// EncodeStream writes every key group's blob to w (plan.StreamingPending).
func (p *pendingKeyed) EncodeStream(w io.Writer, buf []byte, useDelta func(g int) bool) (plan.Snapshot, int64, []byte, error) {
	st, out, err := p.snap.EncodeStream(w, buf, useDelta)
	if err != nil {
		return plan.Snapshot{CheckpointID: p.id}, st.Bytes, out, fmt.Errorf("operator %q: snapshot for checkpoint %d: %w", p.name, p.id, err)
	}
	snap := plan.Snapshot{CheckpointID: p.id, KeyGroupCRCs: st.CRCs, Sections: st.Sections, Deltas: st.Deltas}
	if useDelta != nil {
		snap.DeltaSince, snap.Entries = p.snap.Since(), p.entries()
	}
	return snap, st.Bytes, out, nil
}

func (p *pendingKeyed) Release() { p.snap.Release(p.backend) }

// TrackChanges makes the backend note changed keys (plan.Incremental).
func (t *keyedInstance[T, K, Out]) TrackChanges() { t.backend.TrackChanges() }

// ConfirmCheckpoint says checkpoint id completed (plan.Incremental).
func (t *keyedInstance[T, K, Out]) ConfirmCheckpoint(id uint64) { t.backend.Confirm(id) }

// MaxWait is the longest the task waited for a key group being encoded.
func (p *pendingKeyed) MaxWait() time.Duration { return p.snap.MaxWait() }

// RestoreState loads the given key groups' state. Bytes handed over
// (KeyGroupsAdopted) are checked and kept encoded, each group decoded when
// first needed or by DecodeInBackground (state.Backend.RestoreGroupsLazy);
// others are decoded in parallel at once (state.Backend.RestoreGroups).
func (t *keyedInstance[T, K, Out]) RestoreState(snap plan.Snapshot) error {
	blobs := make([]state.GroupBlob, 0, len(snap.KeyGroups))
	for _, g := range slices.Sorted(maps.Keys(snap.KeyGroups)) {
		if int(t.owners[g]) != t.ctx.instance {
			return fmt.Errorf("operator %q instance %d: asked to restore key group %d owned by instance %d", t.name, t.ctx.instance, g, t.owners[g])
		}
		crc, known := snap.KeyGroupCRCs[g]
		blobs = append(blobs, state.GroupBlob{Group: g, Blob: snap.KeyGroups[g], CRC: crc, CRCKnown: known})
	}
	restore := t.backend.RestoreGroupsLazy
	if !snap.KeyGroupsAdopted {
		restore = func(blobs []state.GroupBlob) error { return t.backend.RestoreGroups(blobs, false) }
	}
	if err := restore(blobs); err != nil {
		return fmt.Errorf("operator %q: %w", t.name, err)
	}
	return nil
}

// LazyRestore is the instance's backend, whose restore leaves key groups
// encoded (plan.LazyRestoring).
func (t *keyedInstance[T, K, Out]) LazyRestore() plan.LazyRestorer { return t.backend }
