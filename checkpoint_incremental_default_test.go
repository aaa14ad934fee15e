package weir_test

import (
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/samples/keycount"
)

// TestCheckpointsAreIncrementalByDefault: a run whose CheckpointConfig
// says nothing about it writes deltas (a checkpoint after the first writes
// less operator state than it restores from); FullCheckpoints writes every
// checkpoint whole, and so do synchronous snapshots, which cannot be
// incremental. Keycount over as many keys as records, slowed down, changes
// few of its keys between checkpoints 20 ms apart.
func TestCheckpointsAreIncrementalByDefault(t *testing.T) {
	base := weir.CheckpointConfig{Mode: weir.CheckpointUnaligned, Interval: 20 * time.Millisecond, Retain: 3}
	full, sync := base, base
	full.FullCheckpoints = true
	sync.SyncSnapshots = true
	for _, tc := range []struct {
		name   string
		cc     weir.CheckpointConfig
		deltas bool
	}{{"default", base, true}, {"full", full, false}, {"sync-snapshots", sync, false}} {
		t.Run(tc.name, func(t *testing.T) {
			run := runKeycountUntil(t, keycount.Config{Records: incrN, Keys: incrK, SleepMs: 0.2}, tc.cc, 4)
			smaller := 0
			for _, c := range run.job.Checkpoints() {
				if c.StateWrittenBytes > c.StateBytes {
					t.Errorf("checkpoint %d wrote %d bytes of state, more than its %d", c.ID, c.StateWrittenBytes, c.StateBytes)
				}
				if c.StateWrittenBytes < c.StateBytes {
					smaller++
				}
			}
			switch n := len(run.job.Checkpoints()); {
			case tc.deltas && smaller == 0:
				t.Errorf("none of %d checkpoints wrote less than its whole state: %+v", n, run.job.Checkpoints())
			case !tc.deltas && smaller > 0:
				t.Errorf("%d of %d checkpoints wrote less than their whole state: %+v", smaller, n, run.job.Checkpoints())
			}
		})
	}
}
