package node

import (
	"testing"

	"github.com/weirstream/weir/cluster"
)

// TestWarmBytesCountsTheNewestCheckpointOfEachJob: per job only the newest
// checkpoint held counts, with all of its operators; older checkpoints and
// empty holdings do not.
func TestWarmBytesCountsTheNewestCheckpointOfEachJob(t *testing.T) {
	for _, c := range []struct {
		name string
		held []cluster.HeldState
		want int64
	}{
		{"nothing held", nil, 0},
		{"one operator", []cluster.HeldState{{Job: "a", Operator: "fill", Checkpoint: 3, Bytes: 100}}, 100},
		{"older checkpoints left out", []cluster.HeldState{
			{Job: "a", Operator: "fill", Checkpoint: 2, Bytes: 1000},
			{Job: "a", Operator: "fill", Checkpoint: 3, Bytes: 100},
			{Job: "a", Operator: "sink", Checkpoint: 3, Bytes: 7},
			{Job: "a", Operator: "sink", Checkpoint: 1, Bytes: 5000},
		}, 107},
		{"each job its own newest", []cluster.HeldState{
			{Job: "a", Operator: "fill", Checkpoint: 9, Bytes: 10},
			{Job: "b", Operator: "fill", Checkpoint: 2, Bytes: 20},
			{Job: "b", Operator: "fill", Checkpoint: 1, Bytes: 40},
		}, 30},
		{"an operator missing from the newest", []cluster.HeldState{
			{Job: "a", Operator: "fill", Checkpoint: 4, Bytes: 10},
			{Job: "a", Operator: "sink", Checkpoint: 3, Bytes: 20},
		}, 10},
		{"empty or negative holdings", []cluster.HeldState{
			{Job: "a", Operator: "fill", Checkpoint: 4, Bytes: 0},
			{Job: "a", Operator: "sink", Checkpoint: 4, Bytes: -5},
		}, 0},
	} {
		if got := warmBytes(c.held); got != c.want {
			t.Errorf("%s: warmBytes = %d, want %d", c.name, got, c.want)
		}
	}
}
