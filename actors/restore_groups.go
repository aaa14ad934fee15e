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
type groupBatch struct {
	stateful plan.Stateful // nil: the task keeps no state, sections are dropped
	size     int
	snap     plan.Snapshot
}

// newGroupBatch returns an empty batch restoring into stateful (may be nil)
// from checkpoint ckpt.
func newGroupBatch(stateful plan.Stateful, ckpt uint64) *groupBatch {
	size := runtime.GOMAXPROCS(0)
	return &groupBatch{stateful: stateful, size: size, snap: plan.Snapshot{CheckpointID: ckpt,
		KeyGroups: make(map[int][]byte, size), KeyGroupCRCs: make(map[int]uint32, size), KeyGroupsAdopted: true}}
}

// add queues key group g's section, verified against crc, and restores the
// batch once it is full.
func (b *groupBatch) add(g int, data []byte, crc uint32) error {
	if b.stateful == nil {
		return nil
	}
	b.snap.KeyGroups[g] = data
	b.snap.KeyGroupCRCs[g] = crc
	if len(b.snap.KeyGroups) < b.size {
		return nil
	}
	return b.flush()
}

// flush restores the queued sections, if any.
func (b *groupBatch) flush() error {
	if len(b.snap.KeyGroups) == 0 {
		return nil
	}
	err := b.stateful.RestoreState(b.snap)
	clear(b.snap.KeyGroups)
	clear(b.snap.KeyGroupCRCs)
	return err
}
