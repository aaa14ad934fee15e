package plan

// GroupFreezer is a GroupMover that can hand key groups off without
// encoding them on the task's goroutine: FreezeGroups takes a view of the
// groups in time proportional to their number, not to their state, and the
// view is encoded on another goroutine while the task goes on processing the
// groups that stay.
type GroupFreezer interface {
	GroupMover
	// FreezeGroups takes groups off the instance: it owns them no more from
	// now on (a record of one is an error, so their state is never written
	// again here), and the result encodes their state as ExportGroups would
	// have at this moment.
	FreezeGroups(groups []int) (FrozenGroups, error)
}

// FrozenGroups is the state of key groups frozen for a handoff.
type FrozenGroups interface {
	// Encode returns the encoded state of the groups that hold any, as
	// ExportGroups would have; it may run on any goroutine, once.
	Encode() (map[int][]byte, error)
	// Drop lets go of the view and drops the groups' state, on the task's
	// goroutine, after Encode returned or instead of it.
	Drop()
}
