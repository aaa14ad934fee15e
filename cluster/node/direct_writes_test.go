package node

import (
	"context"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// TestDirectWritesReachTheNodesLocalCopy: Config.DirectWrites makes the
// store of the node's copy of checkpoint state write past the page cache;
// without it the copy goes through the cache.
func TestDirectWritesReachTheNodesLocalCopy(t *testing.T) {
	s := startNATS(t)
	for _, direct := range []bool{false, true} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		a, err := Start(ctx, Config{ID: "n1", Workdir: t.TempDir(), Slots: 1, HeartbeatTimeout: agentTestHeartbeat,
			PlacementTimeout: 10 * time.Second, DirectWrites: direct, Jobs: testJobs, Log: zerolog.Nop()}, connect(t, s))
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if got := a.local.WritesDirectly(); got != direct {
			t.Errorf("DirectWrites %v: the local copy writes directly: %v", direct, got)
		}
		a.Shutdown()
	}
}
