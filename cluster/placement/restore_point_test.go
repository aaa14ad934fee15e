package placement

import "testing"

// TestRestorePoint: a running job restores from its newest completed
// checkpoint, not from the one it was set up (taken over) from, which
// retention deletes once newer ones complete.
func TestRestorePoint(t *testing.T) {
	for _, tc := range []struct {
		name      string
		setUp     uint64
		completed []uint64
		want      uint64
	}{
		{"fresh job, no checkpoint yet", 0, nil, 0},
		{"fresh job", 0, []uint64{1, 2, 3}, 3},
		{"taken over, no checkpoint since", 6, nil, 6},
		{"taken over, newer checkpoints completed", 6, []uint64{7, 8, 9, 10}, 10},
		{"out of order", 6, []uint64{9, 11, 10}, 11},
		{"none newer than the set-up's", 6, []uint64{5}, 6},
	} {
		if got := RestorePoint(tc.setUp, tc.completed); got != tc.want {
			t.Errorf("%s: RestorePoint(%d, %v) = %d, want %d", tc.name, tc.setUp, tc.completed, got, tc.want)
		}
	}
}
