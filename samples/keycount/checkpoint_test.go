package keycount

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/state"
	"github.com/weirstream/weir/store"
)

func TestKeycountWithCheckpoints(t *testing.T) {
	const n, k = 30000, 50
	for _, mode := range []weir.CheckpointMode{weir.CheckpointAligned, weir.CheckpointUnaligned} {
		t.Run(string(mode), func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "out.jsonl")
			g, err := Build(Config{Records: n, Keys: k, Parallelism: 2, Out: out, SleepMs: 0.02})
			if err != nil {
				t.Fatal(err)
			}
			res, err := weir.Run(context.Background(), g, weir.WithCheckpoints(weir.CheckpointConfig{
				Mode: mode, Interval: 50 * time.Millisecond, StateDir: filepath.Join(dir, "state")}))
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Checkpoints) < 2 {
				t.Fatalf("%d checkpoints, want several", len(res.Checkpoints))
			}
			t.Logf("%d checkpoints, last %+v", len(res.Checkpoints), res.Checkpoints[len(res.Checkpoints)-1])
			verifyCounts(t, out, n, k)
		})
	}
}

// TestInflightCount proves, for every checkpoint of a backpressured unaligned
// run, that records reflected in the count operator's state plus records in its
// captured channel state equal the records the sources sent before the barrier:
// none missing, none twice.
func TestInflightCount(t *testing.T) {
	const n, k = 40000, 64
	dir := t.TempDir()
	g, err := Build(Config{Records: n, Keys: k, Parallelism: 2, SleepMs: 0.01})
	if err != nil {
		t.Fatal(err)
	}
	stateDir := filepath.Join(dir, "state")
	res, err := weir.Run(context.Background(), g, weir.WithCheckpoints(weir.CheckpointConfig{
		Mode: weir.CheckpointUnaligned, Interval: 20 * time.Millisecond, Retain: 1000, StateDir: stateDir,
		// Every group whole in every checkpoint: the check below reads each
		// checkpoint's key-group sections on their own, without chains.
		FullCheckpoints: true}),
		weir.WithRuntime(weir.RuntimeOptions{BatchSize: 64, ChannelCapacity: 4}))
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.NewLocal(stateDir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	ids, err := st.List(ctx, "keycount")
	if err != nil {
		t.Fatal(err)
	}
	withInflight := 0
	for _, id := range ids {
		m, err := st.Manifest(ctx, "keycount", id)
		if err != nil {
			t.Fatal(err)
		}
		var sent, inState, inFlight int64
		for _, ts := range m.Tasks {
			switch ts.Operator {
			case "source":
				sent += ts.SourceOffset
			case "count":
				for _, c := range ts.Channels {
					inFlight += int64(c.Records)
				}
				for g, ref := range ts.KeyGroups {
					blob, err := st.GetBlob(ctx, "keycount", id, ref)
					if err != nil {
						t.Fatal(err)
					}
					b := state.NewBackend(m.MaxParallelism)
					counts := state.NewValueTable[int64]("count", m.MaxParallelism)
					if _, err := b.Register(counts); err != nil {
						t.Fatal(err)
					}
					if err := b.RestoreGroup(g, blob); err != nil {
						t.Fatal(err)
					}
					for _, c := range counts.All(g) {
						inState += c
					}
				}
			}
		}
		if inFlight > 0 {
			withInflight++
		}
		if inState+inFlight != sent {
			t.Fatalf("checkpoint %d: %d in state + %d in flight = %d, but sources sent %d before the barrier",
				id, inState, inFlight, inState+inFlight, sent)
		}
	}
	t.Logf("%d checkpoints verified (%d with in-flight data); run took %v", len(ids), withInflight, res.Duration)
	if withInflight == 0 {
		t.Fatalf("no checkpoint captured in-flight data: the test did not exercise overtaking")
	}
}

// TestCorruptBlobIsReported flips a byte in a stored key-group section and
// checks that restoring names the checkpoint, the task and the key group.
func TestCorruptBlobIsReported(t *testing.T) {
	dir := t.TempDir()
	stateDir := filepath.Join(dir, "state")
	cc := weir.CheckpointConfig{Mode: weir.CheckpointUnaligned, Interval: time.Hour, StateDir: stateDir}
	g, _ := Build(Config{Records: 5000, Keys: 20, Parallelism: 2})
	if _, err := weir.Run(context.Background(), g, weir.WithCheckpoints(cc)); err != nil {
		t.Fatal(err)
	}
	st, err := store.NewLocal(stateDir)
	if err != nil {
		t.Fatal(err)
	}
	m, err := st.Latest(context.Background(), "keycount")
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	var task store.TaskSnapshot
	for _, ts := range m.Tasks {
		if ts.Operator == "count" && ts.Instance == 1 {
			task = ts
		}
	}
	group, ref := -1, store.BlobRef{}
	for g, r := range task.KeyGroups {
		if group < 0 || g < group {
			group, ref = g, r
		}
	}
	if group < 0 {
		t.Fatal("count[1] has no key groups in the checkpoint")
	}
	path := filepath.Join(stateDir, "keycount", fmt.Sprintf("chk-%020d", m.CheckpointID), filepath.FromSlash(ref.Name))
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	raw[ref.Offset+ref.Size/2] ^= 0x10
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	g2, _ := Build(Config{Records: 5000, Keys: 20, Parallelism: 2})
	_, err = weir.Run(context.Background(), g2, weir.WithCheckpoints(cc), weir.WithRestore("latest"))
	if !errors.Is(err, store.ErrCorrupt) {
		t.Fatalf("restore of a corrupt blob: %v, want ErrCorrupt", err)
	}
	for _, want := range []string{fmt.Sprintf("checkpoint %d", m.CheckpointID), "count[1]", fmt.Sprintf("key group %d", group)} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("error %q does not name %q", err, want)
		}
	}
}
