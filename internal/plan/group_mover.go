package plan

// GroupMover is a keyed instance whose key groups can move to another
// instance while the job runs (a live rescale).
type GroupMover interface {
	// ExportGroups returns the encoded state of groups (only those that hold
	// any) and drops it: the instance no longer owns them, and a record of
	// one of them is an error from now on.
	ExportGroups(groups []int) (map[int][]byte, error)
	// ImportGroups loads the state of groups handed off by another instance
	// (blobs has no entry for a group without state) and owns them from now
	// on.
	ImportGroups(groups []int, blobs map[int][]byte) error
}
