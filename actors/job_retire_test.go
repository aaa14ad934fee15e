package actors

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/weirstream/weir/barriers"
	"github.com/weirstream/weir/internal/poll"
	"github.com/weirstream/weir/store"
)

// retireWatchStore is a local store that holds the first retire's listing
// of uncommitted checkpoints until released, and counts the retires inside
// it at once.
type retireWatchStore struct {
	*store.Local
	entered  chan struct{} // closed when the first retire is inside
	release  chan struct{} // closed by the test to let it go on
	inside   atomic.Int32
	most     atomic.Int32
	listings atomic.Int32
}

func (s *retireWatchStore) Uncommitted(ctx context.Context, job string) ([]uint64, error) {
	n := s.inside.Add(1)
	defer s.inside.Add(-1)
	for {
		m := s.most.Load()
		if n <= m || s.most.CompareAndSwap(m, n) {
			break
		}
	}
	if s.listings.Add(1) == 1 {
		close(s.entered)
		select {
		case <-s.release:
		case <-ctx.Done():
		}
	}
	return s.Local.Uncommitted(ctx, job)
}

// TestRetiresRunOneAtATime: while a retire of old checkpoints is held in
// the store, checkpoints go on completing and fall out of the retained
// ones; their retire waits for the first instead of running beside it (two
// at once read manifests the other deletes: a JetStream read of an object
// deleted under it hung until its context ended), and runs once it ends.
func TestRetiresRunOneAtATime(t *testing.T) {
	local, err := store.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer local.Close()
	st := &retireWatchStore{Local: local, entered: make(chan struct{}), release: make(chan struct{})}
	opts := Options{BatchSize: 256, ChannelCapacity: 4, FlushInterval: time.Millisecond,
		Checkpoint: CheckpointOptions{Mode: barriers.Unaligned, Interval: 5 * time.Millisecond, Timeout: time.Minute, Retain: 1, Store: st}}
	node := NewNode(zerolog.Nop())
	defer node.Shutdown()
	var counter atomic.Pointer[gatedCounter]
	j, err := node.Submit(counterPlan("retire-one", 1, 200000, nil, 16, &counter), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { j.Stop("test over"); _ = waitJob(t, j) }()
	select {
	case <-st.entered:
	case <-time.After(flowDeadline):
		t.Fatal("no retire of old checkpoints began")
	}
	held := len(j.Checkpoints())
	if !poll.Until(flowDeadline, poll.Every, func() bool { return len(j.Checkpoints()) >= held+3 }) {
		close(st.release)
		t.Fatalf("checkpoints stopped completing while a retire was held: %d", len(j.Checkpoints()))
	}
	if most := st.most.Load(); most != 1 {
		close(st.release)
		t.Fatalf("%d retires ran at once, want 1", most)
	}
	close(st.release)
	if !poll.Until(flowDeadline, poll.Every, func() bool { return st.listings.Load() >= 2 }) {
		t.Fatal("the retires asked for while the first ran never ran")
	}
	if most := st.most.Load(); most != 1 {
		t.Fatalf("%d retires ran at once, want 1", most)
	}
}

// TestStopRetiresWhatItsCheckpointPushedOut: a job with --retain 1 stopped
// with a checkpoint leaves that checkpoint only in the store. Before, the
// stop checkpoint's retire of the one before was cancelled by the job's
// end, which left two and logged "retire old checkpoints ... canceled".
func TestStopRetiresWhatItsCheckpointPushedOut(t *testing.T) {
	for round := range 3 {
		st, err := store.NewLocal(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		opts := Options{BatchSize: 256, ChannelCapacity: 4, FlushInterval: time.Millisecond,
			Checkpoint: CheckpointOptions{Mode: barriers.Unaligned, Interval: 20 * time.Millisecond, Timeout: time.Minute, Retain: 1, Store: st}}
		var log lockedLog
		node := NewNode(zerolog.New(&log).Level(zerolog.DebugLevel))
		var counter atomic.Pointer[gatedCounter]
		j, err := node.Submit(counterPlan("retire-stop", 1, 200000, nil, 16, &counter), opts)
		if err != nil {
			t.Fatal(err)
		}
		if !poll.Until(flowDeadline, poll.Every, func() bool { return len(j.Checkpoints()) >= 2 }) {
			t.Fatal("no two checkpoints")
		}
		j.Stop("test over")
		if err := waitJob(t, j); err != nil {
			t.Fatal(err)
		}
		<-j.Gone()
		node.Shutdown()
		ids, err := st.List(context.Background(), "retire-stop")
		last := j.Checkpoints()[len(j.Checkpoints())-1].ID
		if err != nil || len(ids) != 1 || ids[0] != last {
			t.Fatalf("round %d: the store holds checkpoints %v (%v), want only the last, %d (--retain 1)\n%s", round, ids, err, last, log.String())
		}
		if strings.Contains(log.String(), "retire old checkpoints") {
			t.Fatalf("round %d: a retire failed:\n%s", round, log.String())
		}
		st.Close()
	}
}
