package node

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/weirstream/weir/internal/poll"
)

// TestCheckpointStoreUsesItsOwnConnection: with Config.StoreConn, the
// blobs and manifests of a job's checkpoints go over that connection, not
// over the node's own, which carries heartbeats and lease renewals (and
// records between nodes): a checkpoint's megabytes then do not queue ahead
// of them.
func TestCheckpointStoreUsesItsOwnConnection(t *testing.T) {
	s := startNATS(t)
	nc, storeNC := connect(t, s), connect(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a, err := Start(ctx, Config{ID: "a", Workdir: t.TempDir(), Slots: 8, HeartbeatTimeout: agentTestHeartbeat,
		PlacementTimeout: 10 * time.Second, Jobs: testJobs, Log: zerolog.Nop(), StoreConn: storeNC}, nc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Shutdown)
	out := filepath.Join(t.TempDir(), "counts.jsonl")
	if _, err := a.Submit("keycount", []string{"--records=-1", "--keys=20000", "--parallelism=2", "--sleep-ms=0.005", "--out=" + out}); err != nil {
		t.Fatal(err)
	}
	checkpointed := func() bool {
		st := a.Status(time.Now())
		return len(st.Jobs) == 1 && len(st.Jobs[0].Checkpoints) >= 2
	}
	if !poll.Until(60*time.Second, 20*time.Millisecond, checkpointed) {
		t.Fatalf("no two checkpoints: %+v", a.Status(time.Now()))
	}
	// The bytes of the newest checkpoint the node holds a copy of: what it
	// wrote to the store for that checkpoint.
	var state int64
	held := func() bool {
		a.refreshHeld(context.Background())
		per := map[uint64]int64{}
		for _, h := range a.heartbeat().Held {
			if h.Job == "keycount" {
				per[h.Checkpoint] += h.Bytes
			}
		}
		state = 0
		for _, b := range per {
			state = max(state, b)
		}
		return state >= 100_000
	}
	if !poll.Until(30*time.Second, 20*time.Millisecond, held) {
		t.Fatalf("the node holds %d bytes of a checkpoint, want at least 100,000", state)
	}
	own, st := nc.Stats(), storeNC.Stats()
	t.Logf("largest checkpoint state %d bytes; node connection sent %d bytes, store connection %d", state, own.OutBytes, st.OutBytes)
	if st.OutBytes < uint64(state) {
		t.Fatalf("the store connection sent %d bytes, less than a checkpoint's %d bytes of state", st.OutBytes, state)
	}
	if own.OutBytes >= uint64(state) {
		t.Fatalf("the node's own connection sent %d bytes, as much as a checkpoint's %d bytes of state: the store used it", own.OutBytes, state)
	}
}
