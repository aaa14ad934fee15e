package weir_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/actors"
	"github.com/weirstream/weir/internal/poll"
	"github.com/weirstream/weir/samples/keycount"
	"github.com/weirstream/weir/store"
)

// TestIncrementalRestoreOlderCheckpointAtNewParallelism runs keycount with
// incremental checkpoints and --retain 3 until retention has subsumed
// checkpoints whose blobs retained ones still read, stops it, and restores
// the older of the retained checkpoints whose key-group chains read a
// subsumed checkpoint's sections, at another parallelism: the output must
// be exactly once.
func TestIncrementalRestoreOlderCheckpointAtNewParallelism(t *testing.T) {
	t.Parallel()
	run := runIncrementalKeycount(t)
	run.requireOlder(t)
	t.Logf("retained %v; restoring %d at parallelism 3", run.listed, run.older)
	res, err := weir.Run(context.Background(), run.build(3), weir.WithCheckpoints(run.cc), weir.WithRestore(fmt.Sprint(run.older)))
	if err != nil {
		t.Fatalf("restore %d: %v", run.older, err)
	}
	if res.RestoredFrom != run.older {
		t.Fatalf("restored from %d, want %d", res.RestoredFrom, run.older)
	}
	verifyKeycount(t, run.out, incrN, incrK)
}

// TestIncrementalRestoreCorruptReferencedSection flips a byte of a section
// that a retained checkpoint's chain reads from a subsumed checkpoint's
// blob: the restore fails naming the checkpoint, the operator, the key group
// and the checkpoint that wrote the section.
func TestIncrementalRestoreCorruptReferencedSection(t *testing.T) {
	t.Parallel()
	run := runIncrementalKeycount(t)
	run.requireOlder(t)
	m := run.manifest(t, run.older)
	var g int
	var link store.ChainLink
	for _, ts := range m.Tasks {
		for kg, chain := range ts.KeyGroupChains {
			if l := chain[0]; !slices.Contains(run.listed, l.Checkpoint) {
				g, link = kg, l
			}
		}
	}
	if link.Checkpoint == 0 {
		t.Fatalf("checkpoint %d reads no section of a subsumed checkpoint", run.older)
	}
	path := filepath.Join(run.stateDir, "keycount", fmt.Sprintf("chk-%020d", link.Checkpoint), filepath.FromSlash(link.Ref.Name))
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data[link.Ref.Offset+link.Ref.Size/2] ^= 0x20
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	sup := weir.DefaultSupervision()
	sup.MaxRestarts = 0
	_, err = weir.Run(context.Background(), run.build(2), weir.WithCheckpoints(run.cc), weir.WithRestore(fmt.Sprint(run.older)), weir.WithSupervision(sup))
	if err == nil {
		t.Fatal("a restore reading a corrupt section succeeded")
	}
	for _, want := range []string{fmt.Sprintf("restore checkpoint %d", run.older), "operator count", fmt.Sprintf("key group %d", g),
		fmt.Sprintf("written by checkpoint %d", link.Checkpoint), "corrupt"} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("error %q does not say %q", err, want)
		}
	}
}

const incrN, incrK = 40000, 40000

// incrementalRun is a stopped keycount run with incremental checkpoints.
type incrementalRun struct {
	out, stateDir string
	cc            weir.CheckpointConfig
	build         func(p int) *weir.Graph
	listed        []uint64 // the checkpoints retained
	older         uint64   // a retained one, not the newest, that reads a subsumed checkpoint's sections; 0 if none
	stats         []actors.CheckpointStat
	taskState     map[string]int64 // each task's state bytes in the newest checkpoint
}

// requireOlder fails the test when no retained checkpoint but the newest
// reads a subsumed checkpoint's sections.
func (r incrementalRun) requireOlder(t *testing.T) {
	t.Helper()
	if r.older == 0 {
		t.Fatalf("no retained checkpoint but the newest of %v reads a subsumed checkpoint's sections", r.listed)
	}
}

// runIncrementalKeycount runs keycount with incremental checkpoints and
// --retain 3 until ten checkpoints completed, so that retention has
// (usually) subsumed checkpoints whose blobs retained ones still read, and
// stops it.
func runIncrementalKeycount(t *testing.T) incrementalRun {
	t.Helper()
	const n, k = incrN, incrK
	dir := t.TempDir()
	out, stateDir := filepath.Join(dir, "out.jsonl"), filepath.Join(dir, "state")
	build := func(p int) *weir.Graph {
		g, err := keycount.Build(keycount.Config{Records: n, Keys: k, Parallelism: p, Out: out, SleepMs: 0.2})
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	cc := weir.CheckpointConfig{Mode: weir.CheckpointUnaligned, Interval: 20 * time.Millisecond, StateDir: stateDir, Retain: 3, Incremental: true}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var (
		mu  sync.Mutex
		job *actors.Job
	)
	done := make(chan error, 1)
	go func() {
		_, err := weir.Run(ctx, build(2), weir.WithCheckpoints(cc),
			weir.WithJobObserver(func(j *actors.Job) { mu.Lock(); job = j; mu.Unlock() }))
		done <- err
	}()
	var ended error
	endedEarly := false
	if !poll.Until(2*time.Minute, 5*time.Millisecond, func() bool {
		select {
		case ended = <-done:
			endedEarly = true
			return true
		default:
		}
		mu.Lock()
		defer mu.Unlock()
		return job != nil && len(job.Checkpoints()) >= 10
	}) {
		t.Fatal("10 checkpoints did not complete within 2 minutes")
	}
	if endedEarly {
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("the run ended (%v) after %d checkpoints, before 10", ended, len(job.Checkpoints()))
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("stopped run: %v", err)
	}
	stats, taskState := job.Checkpoints(), job.TaskStateBytes()

	st, err := store.NewLocal(stateDir)
	if err != nil {
		t.Fatal(err)
	}
	listed, err := st.List(context.Background(), "keycount")
	if err != nil {
		t.Fatal(err)
	}
	var older uint64
	for _, id := range listed[:len(listed)-1] {
		m, err := st.Manifest(context.Background(), "keycount", id)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range store.ReferencedCheckpoints(m) {
			if !slices.Contains(listed, r) {
				older = id
			}
		}
	}
	st.Close()
	return incrementalRun{out: out, stateDir: stateDir, cc: cc, build: build, listed: listed, older: older, stats: stats, taskState: taskState}
}

// manifest reads checkpoint id's manifest.
func (r incrementalRun) manifest(t *testing.T, id uint64) *store.Manifest {
	t.Helper()
	st, err := store.NewLocal(r.stateDir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	m, err := st.Manifest(context.Background(), "keycount", id)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
