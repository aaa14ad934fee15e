package node

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/weirstream/weir/cluster/placement"
)

// TestPrepareAtRestorePointRetriesOnceAtANewerCheckpoint scripts the
// prepare of a returned node against a job whose checkpoints complete
// meanwhile: the checkpoint it is prepared at may be subsumed and deleted
// during the prepare itself, which then fails; the prepare is tried once
// more at the newer checkpoint, and never a third time.
func TestPrepareAtRestorePointRetriesOnceAtANewerCheckpoint(t *testing.T) {
	errDeleted := errors.New("checkpoint deleted")
	for _, tc := range []struct {
		name string
		// completes[i] is the checkpoints the job completes during
		// attempt i; fails[i] whether attempt i fails.
		completes [][]uint64
		fails     []bool
		wantAt    []uint64 // checkpoint of each attempt
		wantErr   bool
	}{
		{name: "first attempt succeeds", completes: [][]uint64{{7}}, fails: []bool{false}, wantAt: []uint64{5}},
		{name: "checkpoint subsumed during the prepare: once more at the newer one",
			completes: [][]uint64{{6, 7}, nil}, fails: []bool{true, false}, wantAt: []uint64{5, 7}},
		{name: "failure with no newer checkpoint is final",
			completes: [][]uint64{nil}, fails: []bool{true}, wantAt: []uint64{5}, wantErr: true},
		{name: "never a third attempt",
			completes: [][]uint64{{6}, {7}, {8}}, fails: []bool{true, true, false}, wantAt: []uint64{5, 6}, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const setUp = 5
			var completed, at []uint64
			retries := 0
			point := func() uint64 { return placement.RestorePoint(setUp, completed) }
			err := prepareAtRestorePoint(point, func(p uint64) error {
				i := len(at)
				at = append(at, p)
				if i >= len(tc.fails) {
					t.Fatalf("attempt %d at checkpoint %d not scripted", i+1, p)
				}
				completed = append(completed, tc.completes[i]...)
				if tc.fails[i] {
					return fmt.Errorf("prepare at checkpoint %d: %w", p, errDeleted)
				}
				return nil
			}, func(err error, newer uint64) {
				retries++
				if !errors.Is(err, errDeleted) || newer != point() {
					t.Errorf("retrying(%v, %d), restore point %d", err, newer, point())
				}
			})
			if !slices.Equal(at, tc.wantAt) {
				t.Errorf("prepared at %v, want %v", at, tc.wantAt)
			}
			if retries != len(tc.wantAt)-1 {
				t.Errorf("%d retries logged, want %d", retries, len(tc.wantAt)-1)
			}
			if (err != nil) != tc.wantErr || (err != nil && !errors.Is(err, errDeleted)) {
				t.Errorf("err = %v, want error %v", err, tc.wantErr)
			}
		})
	}
}
