package weir_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/samples/keycount"
	"github.com/weirstream/weir/store"
)

const onceN, onceK = 30000, 3000

// backpressuredRun is a stopped keycount run whose count stage is slow,
// with unaligned checkpoints every few milliseconds: its channels stay
// full, so consecutive checkpoints capture the same queued buffers.
type backpressuredRun struct {
	stoppedRun
	stats []weir.CheckpointStat
}

// runBackpressuredKeycount runs keycount (2 instances, 0.3 ms per record in
// count) with unaligned checkpoints every 5 ms and --retain 3 until at
// least minCkpts checkpoints completed, and stops it.
func runBackpressuredKeycount(t *testing.T, concurrent, minCkpts int) backpressuredRun {
	t.Helper()
	run := runKeycountUntil(t, keycount.Config{Records: onceN, Keys: onceK, SleepMs: 0.3},
		weir.CheckpointConfig{Mode: weir.CheckpointUnaligned, Interval: 5 * time.Millisecond, Retain: 3, MaxConcurrent: concurrent}, minCkpts)
	return backpressuredRun{stoppedRun: run, stats: run.res.Checkpoints}
}

// channelBytes sums the channel-state sections of m: those its own blobs
// hold, and those it refers to in earlier checkpoints' blobs.
func channelBytes(m *store.Manifest) (own, referenced int64) {
	for _, ts := range m.Tasks {
		for _, c := range ts.Channels {
			for _, p := range c.Parts {
				if p.Checkpoint == m.CheckpointID {
					own += p.Ref.Size
				} else {
					referenced += p.Ref.Size
				}
			}
		}
	}
	return own, referenced
}

// subsumedReference returns a retained checkpoint, and an earlier one whose
// manifest retention already deleted, of whose blob it reads channel state.
func (r backpressuredRun) subsumedReference(t *testing.T) (uint64, store.ChannelPart, store.TaskSnapshot, int) {
	t.Helper()
	for _, id := range r.listed {
		m := r.manifest(t, id)
		for _, ts := range m.Tasks {
			for _, c := range ts.Channels {
				for _, p := range c.Parts {
					if p.Checkpoint != id && !slices.Contains(r.listed, p.Checkpoint) {
						return id, p, ts, c.Input
					}
				}
			}
		}
	}
	return 0, store.ChannelPart{}, store.TaskSnapshot{}, 0
}

// TestChannelStateQueuedBuffersWrittenOnce runs a backpressured job with
// unaligned checkpoints every 5 ms: a checkpoint whose barriers overtook
// buffers the previous checkpoint stored refers to them instead of writing
// them again. The counters say so (bytes written < bytes captured), and
// they agree with the manifests, whose parts read earlier checkpoints'
// blobs. Before, every checkpoint wrote all it captured.
func TestChannelStateQueuedBuffersWrittenOnce(t *testing.T) {
	t.Parallel()
	run := runBackpressuredKeycount(t, 1, 12)
	var written, referenced int64
	saving := 0
	for _, s := range run.stats {
		t.Logf("checkpoint %d: %d bytes written, %d referenced, %d buffers", s.ID, s.InflightBytes, s.InflightRefBytes, s.InflightBuffers)
		written += s.InflightBytes
		referenced += s.InflightRefBytes
		if s.InflightRefBytes > 0 {
			saving++
		}
	}
	if saving < 2 || referenced == 0 {
		t.Fatalf("%d of %d checkpoints referred to stored buffers (%d bytes): want consecutive checkpoints to share the queued ones", saving, len(run.stats), referenced)
	}
	if written >= written+referenced || written == 0 {
		t.Fatalf("checkpoints wrote %d of %d captured channel-state bytes", written, written+referenced)
	}
	byID := map[uint64]weir.CheckpointStat{}
	for _, s := range run.stats {
		byID[s.ID] = s
	}
	for _, id := range run.listed {
		s, ok := byID[id]
		if !ok {
			continue // completed after the observer's last look
		}
		own, ref := channelBytes(run.manifest(t, id))
		if own != s.InflightBytes || ref != s.InflightRefBytes {
			t.Fatalf("checkpoint %d: manifest holds %d own and %d referenced channel-state bytes, counters say %d and %d",
				id, own, ref, s.InflightBytes, s.InflightRefBytes)
		}
	}
	t.Logf("%d checkpoints wrote %d channel-state bytes and referred to %d", len(run.stats), written, referenced)
}

// TestChannelStateRestoreReadsSubsumedCheckpoint restores, at the same and
// at a new parallelism (redistributed), a retained checkpoint whose channel
// state reads a checkpoint whose own manifest retention deleted: the
// referenced buffers are replayed from the subsumed checkpoint's blob,
// output exactly once.
func TestChannelStateRestoreReadsSubsumedCheckpoint(t *testing.T) {
	t.Parallel()
	for _, p := range []int{2, 3} {
		t.Run(fmt.Sprintf("parallelism %d", p), func(t *testing.T) {
			t.Parallel()
			run := runBackpressuredKeycount(t, 1, 12)
			id, part, _, _ := run.subsumedReference(t)
			if id == 0 {
				t.Fatalf("no retained checkpoint of %v reads channel state of a subsumed one", run.listed)
			}
			t.Logf("retained %v; %d reads channel state of subsumed %d", run.listed, id, part.Checkpoint)
			res, err := weir.Run(context.Background(), run.build(p), weir.WithCheckpoints(run.cc), weir.WithRestore(fmt.Sprint(id)))
			if err != nil {
				t.Fatalf("restore %d: %v", id, err)
			}
			if res.RestoredFrom != id {
				t.Fatalf("restored from %d, want %d", res.RestoredFrom, id)
			}
			verifyKeycount(t, run.out, onceN, onceK)
		})
	}
}

// TestChannelStateCorruptReferencedSection flips a byte of channel state
// that a retained checkpoint reads from a subsumed checkpoint's blob: the
// restore fails naming the checkpoint, the task's input and the checkpoint
// that wrote the section, and "latest" skips the checkpoint for an intact
// one.
func TestChannelStateCorruptReferencedSection(t *testing.T) {
	t.Parallel()
	run := runBackpressuredKeycount(t, 1, 12)
	id, part, ts, input := run.subsumedReference(t)
	if id == 0 {
		t.Fatalf("no retained checkpoint of %v reads channel state of a subsumed one", run.listed)
	}
	path := filepath.Join(run.stateDir, "keycount", fmt.Sprintf("chk-%020d", part.Checkpoint), filepath.FromSlash(part.Ref.Name))
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data[part.Ref.Offset+part.Ref.Size/2] ^= 0x20
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	sup := weir.DefaultSupervision()
	sup.MaxRestarts = 0
	_, err = weir.Run(context.Background(), run.build(2), weir.WithCheckpoints(run.cc), weir.WithRestore(fmt.Sprint(id)), weir.WithSupervision(sup))
	if err == nil {
		t.Fatal("a restore reading a corrupt channel-state section succeeded")
	}
	for _, want := range []string{fmt.Sprintf("checkpoint %d", id), fmt.Sprintf("task %s[%d]", ts.Operator, ts.Instance),
		fmt.Sprintf("channel state of input %d", input), fmt.Sprintf("written by checkpoint %d", part.Checkpoint), "corrupt"} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("error %q does not say %q", err, want)
		}
	}
}

// TestChannelStateConcurrentCheckpointsReferOnlyCompleted runs the
// backpressured job with two checkpoints in flight: no manifest refers to
// channel state of a checkpoint that did not complete, and the job
// restored from its latest checkpoint finishes exactly once. (Which
// checkpoint a task may refer to is scripted in actors'
// TestTaskFramesReferOnlyLastCompleted.)
func TestChannelStateConcurrentCheckpointsReferOnlyCompleted(t *testing.T) {
	t.Parallel()
	run := runBackpressuredKeycount(t, 2, 12)
	completed := map[uint64]bool{}
	for _, s := range run.stats {
		completed[s.ID] = true
	}
	refs := 0
	for _, id := range run.listed {
		m := run.manifest(t, id)
		for _, r := range store.ReferencedCheckpoints(m) {
			refs++
			if !completed[r] && r < run.stats[len(run.stats)-1].ID {
				t.Fatalf("checkpoint %d refers to checkpoint %d, which did not complete (completed: %v)", id, r, run.stats)
			}
		}
	}
	t.Logf("retained %v refer to %d earlier checkpoints", run.listed, refs)
	restoreLatest(t, run.build(2), weir.WithCheckpoints(run.cc))
	verifyKeycount(t, run.out, onceN, onceK)
}
