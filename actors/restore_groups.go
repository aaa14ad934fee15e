package actors

import (
	"runtime"

	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/store"
)

// keyGroupSections picks, for the key groups an instance owns now, the
// section of whichever task of operator op in manifest m stored each one:
// at a new parallelism a task's groups come from several old tasks' blobs,
// and only their sections are read. It returns the owned groups that have
// state, ascending as owned is, and their sections; a group without state
// has no section and is left out.
func keyGroupSections(m *store.Manifest, op string, owned []int) ([]int, []store.BlobRef) {
	stored := map[int]store.BlobRef{}
	for i := range m.Tasks {
		if m.Tasks[i].Operator != op {
			continue
		}
		for g, ref := range m.Tasks[i].KeyGroups {
			stored[g] = ref
		}
	}
	var groups []int
	var refs []store.BlobRef
	for _, g := range owned {
		if ref, ok := stored[g]; ok {
			groups = append(groups, g)
			refs = append(refs, ref)
		}
	}
	return groups, refs
}

// channelsReshaped reports whether the channels into op differ from the
// checkpoint's: op or one of its producers runs at another parallelism. Its
// captured channel state then has to be redistributed.
func channelsReshaped(m *store.Manifest, op *plan.Operator) bool {
	if m.Parallelism[op.Name] != op.Parallelism {
		return true
	}
	for _, e := range op.Inputs {
		if m.Parallelism[e.From.Name] != e.From.Parallelism {
			return true
		}
	}
	return false
}

// groupBatch hands key-group sections to a stateful instance a batch at a
// time: GOMAXPROCS sections, which the instance decodes in parallel. Each
// section is in a buffer of its own (store.EachSectionKept) that the
// restored state adopts, so a batch holds at most GOMAXPROCS sections
// besides the state itself.
//
// With an instance that stages its restore (plan.RestoreStager) a full
// batch decodes on a goroutine of its own while the caller reads the next
// one: reading and decoding overlap, and at most two batches are held (one
// decoding, one being read). Batches are committed in order on the
// caller's goroutine: before the next one is handed to the decoder, and by
// flush. The caller must call wait before it returns, whatever happened.
type groupBatch struct {
	stateful plan.Stateful      // nil: the task keeps no state, sections are dropped
	stager   plan.RestoreStager // stateful, when it stages its restore
	size     int
	snap     plan.Snapshot
	decoding chan stagedBatch // the batch decoding, if any (capacity 1)
	inFlight bool
}

// stagedBatch is a batch decoded off the caller's goroutine.
type stagedBatch struct {
	staged plan.StagedGroups
	err    error
}

// newGroupBatch returns an empty batch restoring into stateful (may be nil)
// from checkpoint ckpt.
func newGroupBatch(stateful plan.Stateful, ckpt uint64) *groupBatch {
	size := runtime.GOMAXPROCS(0)
	b := &groupBatch{stateful: stateful, size: size, snap: newBatchSnapshot(ckpt, size)}
	b.stager, _ = stateful.(plan.RestoreStager)
	return b
}

// newBatchSnapshot is an empty snapshot of adopted key-group sections.
func newBatchSnapshot(ckpt uint64, size int) plan.Snapshot {
	return plan.Snapshot{CheckpointID: ckpt, KeyGroups: make(map[int][]byte, size),
		KeyGroupCRCs: make(map[int]uint32, size), KeyGroupsAdopted: true}
}

// add queues key group g's section, verified against crc, and restores the
// batch once it is full (or hands it to the decoder).
func (b *groupBatch) add(g int, data []byte, crc uint32) error {
	if b.stateful == nil {
		return nil
	}
	b.snap.KeyGroups[g] = data
	b.snap.KeyGroupCRCs[g] = crc
	if len(b.snap.KeyGroups) < b.size {
		return nil
	}
	if b.stager == nil {
		return b.restoreQueued()
	}
	return b.handOff()
}

// flush restores the queued sections, if any, and commits the batch still
// decoding.
func (b *groupBatch) flush() error {
	if b.stager == nil {
		return b.restoreQueued()
	}
	if err := b.wait(); err != nil {
		return err
	}
	if len(b.snap.KeyGroups) == 0 {
		return nil
	}
	staged, err := b.stager.StageRestore(b.snap)
	b.snap = newBatchSnapshot(b.snap.CheckpointID, b.size)
	if err != nil {
		return err
	}
	return staged.Commit()
}

// restoreQueued restores the queued sections on the caller's goroutine.
func (b *groupBatch) restoreQueued() error {
	if len(b.snap.KeyGroups) == 0 {
		return nil
	}
	err := b.stateful.RestoreState(b.snap)
	clear(b.snap.KeyGroups)
	clear(b.snap.KeyGroupCRCs)
	return err
}

// handOff commits the batch decoding, if any, and has the queued one
// decode on a goroutine of its own.
func (b *groupBatch) handOff() error {
	if err := b.wait(); err != nil {
		return err
	}
	snap := b.snap
	b.snap = newBatchSnapshot(snap.CheckpointID, b.size)
	if b.decoding == nil {
		b.decoding = make(chan stagedBatch, 1)
	}
	b.inFlight = true
	go func() {
		staged, err := b.stager.StageRestore(snap)
		b.decoding <- stagedBatch{staged: staged, err: err}
	}()
	return nil
}

// wait waits for the batch decoding, if any, and commits it.
func (b *groupBatch) wait() error {
	if !b.inFlight {
		return nil
	}
	r := <-b.decoding
	b.inFlight = false
	if r.err != nil {
		return r.err
	}
	return r.staged.Commit()
}

// discard waits for the batch decoding, if any, without committing it: the
// restore failed.
func (b *groupBatch) discard() {
	if b.inFlight {
		<-b.decoding
		b.inFlight = false
	}
}
