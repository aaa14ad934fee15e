package node

import (
	"testing"

	"github.com/weirstream/weir/cluster"
)

// TestWarmBytesCountsTheLargestCheckpointOfEachJob: per job the checkpoint
// holding the most counts, with all of its operators, less its key groups
// stored as chains; the others and empty holdings do not.
func TestWarmBytesCountsTheLargestCheckpointOfEachJob(t *testing.T) {
	for _, c := range []struct {
		name string
		held []cluster.HeldState
		want int64
	}{
		{"nothing held", nil, 0},
		{"one operator", []cluster.HeldState{{Job: "a", Operator: "fill", Checkpoint: 3, Bytes: 100}}, 100},
		{"operators summed per checkpoint", []cluster.HeldState{
			{Job: "a", Operator: "fill", Checkpoint: 2, Bytes: 100},
			{Job: "a", Operator: "fill", Checkpoint: 3, Bytes: 100},
			{Job: "a", Operator: "sink", Checkpoint: 3, Bytes: 7},
			{Job: "a", Operator: "sink", Checkpoint: 1, Bytes: 50},
		}, 107},
		{"each job its own largest", []cluster.HeldState{
			{Job: "a", Operator: "fill", Checkpoint: 9, Bytes: 10},
			{Job: "b", Operator: "fill", Checkpoint: 2, Bytes: 20},
			{Job: "b", Operator: "fill", Checkpoint: 1, Bytes: 40},
		}, 50},
		{"a newest checkpoint written in part", []cluster.HeldState{
			{Job: "a", Operator: "fill", Checkpoint: 3, Bytes: 10},
			{Job: "a", Operator: "fill", Checkpoint: 4, Bytes: 6},
		}, 10},
		{"chains left out", []cluster.HeldState{
			{Job: "a", Operator: "fill", Checkpoint: 4, Bytes: 100, KeyGroupBytes: 90, ChainBytes: 60},
			{Job: "a", Operator: "sink", Checkpoint: 4, Bytes: 5},
		}, 45},
		{"all chains", []cluster.HeldState{
			{Job: "a", Operator: "fill", Checkpoint: 4, Bytes: 90, KeyGroupBytes: 90, ChainBytes: 90},
		}, 0},
		{"empty or negative holdings", []cluster.HeldState{
			{Job: "a", Operator: "fill", Checkpoint: 4, Bytes: 0},
			{Job: "a", Operator: "sink", Checkpoint: 4, Bytes: -5},
		}, 0},
	} {
		if got := warmBytes(c.held, nil); got != c.want {
			t.Errorf("%s: warmBytes = %d, want %d", c.name, got, c.want)
		}
	}
	held := []cluster.HeldState{
		{Job: "a", Operator: "fill", Checkpoint: 9, Bytes: 10},
		{Job: "b", Operator: "fill", Checkpoint: 2, Bytes: 20},
		{Job: "c", Operator: "fill", Checkpoint: 2, Bytes: 40},
	}
	if got := warmBytes(held, map[string]bool{"a": true, "c": true, "gone": true}); got != 50 {
		t.Errorf("jobs a and c: warmBytes = %d, want 50", got)
	}
	if got := warmBytes(held, map[string]bool{}); got != 0 {
		t.Errorf("no job running here: warmBytes = %d, want 0", got)
	}
}
