package placement

// RestorePoint is the checkpoint a running job restores its tasks from now:
// the newest of those it completed since it was set up (completed), else
// the one it was set up from (setUp; 0: none). A node that returns is
// prepared at it, and placement looks for state held at it: by then the
// set-up's checkpoint may be subsumed and deleted (it is, after a
// take-over, once the job completed a few newer ones).
func RestorePoint(setUp uint64, completed []uint64) uint64 {
	point := setUp
	for _, id := range completed {
		point = max(point, id)
	}
	return point
}
