package plan

// GroupStager is a GroupMover that can take key groups handed off to it
// without decoding them on the task's goroutine: StageGroups decodes on any
// goroutine, changing nothing, and the result's Commit installs the state on
// the task's, in time proportional to the number of groups.
type GroupStager interface {
	GroupMover
	// StageGroups decodes the state of groups handed off by another
	// instance (blobs has no entry for a group without state); it may run
	// on any goroutine while the task goes on.
	StageGroups(groups []int, blobs map[int][]byte) (StagedGroups, error)
}

// StagedGroups is handed-off state decoded by StageGroups.
type StagedGroups interface {
	// Commit does what ImportGroups does with the decoded state, on the
	// task's goroutine.
	Commit() error
}
