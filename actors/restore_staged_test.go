package actors

import (
	"slices"
	"testing"

	"github.com/weirstream/weir/internal/plan"
)

// handOffSinkInst is a sink instance that hands its staged output off
// (plan.StagedHandoff), for restore planning.
type handOffSinkInst struct{}

func (handOffSinkInst) Open(plan.TaskInfo) error                    { return nil }
func (handOffSinkInst) Close() error                                { return nil }
func (handOffSinkInst) Write(plan.Batch) error                      { return nil }
func (handOffSinkInst) Finish() error                               { return nil }
func (handOffSinkInst) CommitCheckpoint(uint64) error               { return nil }
func (handOffSinkInst) HandsOff() bool                              { return true }
func (handOffSinkInst) HandOffStaged() ([]byte, error)              { return nil, nil }
func (handOffSinkInst) TakeOverStaged([]byte) error                 { return nil }
func (handOffSinkInst) RecoverHandedOff(id uint64, st []byte) error { return nil }

// TestPlanRestoreHandOffSinkShrinks: a checkpoint with a sink that hands
// its staged output off restores at fewer instances, each removed
// instance's state going to instance r mod the new parallelism; a sink
// that does not hand off is refused (TestPlanRestoreSinkStateGrowsOnly).
func TestPlanRestoreHandOffSinkShrinks(t *testing.T) {
	withSink := func(p int) *plan.Job {
		j := restorePlanJob(t, 2)
		j.Operators[2].Parallelism = p
		j.Operators[2].New = func(int) (plan.Instance, error) { return handOffSinkInst{}, nil }
		j.Edges[1].Partitioner = plan.ImplicitPartitioner(2, p)
		return j
	}
	man := manifestOf(withSink(4))
	for _, tc := range []struct {
		to   int
		want [][]int // per remaining instance, the removed ones it recovers
	}{
		{1, [][]int{{1, 2, 3}}},
		{2, [][]int{{2}, {3}}},
		{3, [][]int{{3}, nil, nil}},
		{4, [][]int{nil, nil, nil, nil}},
	} {
		j := withSink(tc.to)
		rp, err := PlanRestore(j, man)
		if err != nil {
			t.Fatalf("sink 4 → %d: %v", tc.to, err)
		}
		if o := rp.Operators[2]; o.From != 4 || o.To != tc.to {
			t.Fatalf("sink restore %+v, want from 4 to %d", o, tc.to)
		}
		for i, want := range tc.want {
			var got []int
			for _, ts := range removedStaged(man, j.Operators[2], i) {
				got = append(got, ts.Instance)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("sink 4 → %d, instance %d recovers removed %v, want %v", tc.to, i, got, want)
			}
		}
	}
	if got := removedStaged(man, withSink(1).Operators[1], 0); got != nil {
		t.Fatalf("count (not a sink) recovers %v, want none", got)
	}
}
