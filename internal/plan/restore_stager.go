package plan

// RestoreStager is a Stateful whose key groups restore in two steps, so that
// a restore reads the next sections while the previous ones decode:
// StageRestore decodes the key groups of s (KeyGroups only: no operator
// state) on any goroutine, changing nothing the task reads, and the
// result's Commit installs them on the task's goroutine, in the order the
// stages were made. Staging then committing is what RestoreState does with
// the same snapshot.
type RestoreStager interface {
	Stateful
	StageRestore(s Snapshot) (StagedGroups, error)
}
