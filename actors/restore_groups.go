package actors

import (
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
