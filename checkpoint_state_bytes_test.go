package weir_test

import (
	"testing"
)

// TestIncrementalCheckpointStateBytes: with incremental checkpoints a
// checkpoint's state bytes are the full size of the state it restores from
// (every whole section and delta of its manifest, whichever checkpoint wrote
// it) and its state bytes written are what it wrote itself; a checkpoint
// that wrote deltas wrote less than its full size, and some did. Each task's state bytes
// (the web page's task table) add up to the newest checkpoint's full size.
func TestIncrementalCheckpointStateBytes(t *testing.T) {
	t.Parallel()
	run := runIncrementalKeycount(t)
	byID := map[uint64]int{}
	for i, s := range run.stats {
		byID[s.ID] = i
	}
	smaller := 0
	for _, id := range run.listed {
		i, ok := byID[id]
		if !ok {
			t.Fatalf("retained checkpoint %d has no statistics (%d completed)", id, len(run.stats))
		}
		s := run.stats[i]
		var full, written int64
		for _, ts := range run.manifest(t, id).Tasks {
			for _, ref := range ts.KeyGroups {
				full += ref.Size
				written += ref.Size
			}
			for _, chain := range ts.KeyGroupChains {
				for _, l := range chain {
					full += l.Ref.Size
					if l.Checkpoint == id {
						written += l.Ref.Size
					}
				}
			}
			if ts.OperatorState != nil {
				full += ts.OperatorState.Size
				written += ts.OperatorState.Size
			}
		}
		if s.StateBytes != full || s.StateWrittenBytes != written {
			t.Errorf("checkpoint %d: state bytes %d, written %d; its manifest holds %d and it wrote %d", id, s.StateBytes, s.StateWrittenBytes, full, written)
		}
	}
	for _, s := range run.stats {
		if s.StateWrittenBytes < s.StateBytes {
			smaller++
		}
	}
	if smaller == 0 {
		t.Fatalf("none of %d checkpoints wrote deltas", len(run.stats))
	}
	newest := run.stats[len(run.stats)-1]
	var tasks int64
	for _, b := range run.taskState {
		tasks += b
	}
	if tasks != newest.StateBytes {
		t.Fatalf("tasks' state bytes %v add up to %d, the newest checkpoint %d holds %d", run.taskState, tasks, newest.ID, newest.StateBytes)
	}
}
