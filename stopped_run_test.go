package weir_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/actors"
	"github.com/weirstream/weir/internal/poll"
	"github.com/weirstream/weir/samples/keycount"
	"github.com/weirstream/weir/store"
)

// stoppedRun is a keycount run with checkpoints, stopped once enough of
// them completed: its output and state directory, how to build the job
// again, and what the run left.
type stoppedRun struct {
	out, stateDir string
	cc            weir.CheckpointConfig
	build         func(p int) *weir.Graph
	job           *actors.Job // the stopped job: its checkpoints and state sizes
	res           *weir.Result
	listed        []uint64 // the checkpoints retained
}

// stoppedRunSlowdown is how many times longer the stopped run of
// runKeycountUntil sleeps per record than its kc says.
const stoppedRunSlowdown = 4

// runKeycountUntil runs keycount (kc's Out is set to the run's own file;
// parallelism 2; stoppedRunSlowdown times kc's sleep per record) with
// checkpoints cc (StateDir set to the run's own) until at least minCkpts
// checkpoints completed, and stops it; the run's build makes the job as kc
// says, for restores. A run that ends before fails the test at once, saying
// after how many.
func runKeycountUntil(t *testing.T, kc keycount.Config, cc weir.CheckpointConfig, minCkpts int) stoppedRun {
	t.Helper()
	dir := t.TempDir()
	r := stoppedRun{out: filepath.Join(dir, "out.jsonl"), stateDir: filepath.Join(dir, "state"), cc: cc}
	kc.Out, r.cc.StateDir = r.out, r.stateDir
	build := func(kc keycount.Config, p int) *weir.Graph {
		kc.Parallelism = p
		g, err := keycount.Build(kc)
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	r.build = func(p int) *weir.Graph { return build(kc, p) }
	// The stopped run sleeps longer per record than the restores: it is
	// stopped once its checkpoints completed, so a longer run costs nothing
	// where checkpoints are quick, and it still outlives minCkpts
	// checkpoints on a loaded machine (a full make test saw 9 and 11 of 10
	// and 12 before the run ended, at the sleep the restores keep).
	slow := kc
	slow.SleepMs *= stoppedRunSlowdown
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	type ended struct {
		res *weir.Result
		err error
	}
	done := make(chan ended, 1)
	go func() {
		res, err := weir.Run(ctx, build(slow, 2), weir.WithCheckpoints(r.cc),
			weir.WithJobObserver(func(j *actors.Job) { mu.Lock(); r.job = j; mu.Unlock() }))
		done <- ended{res, err}
	}()
	completed := func() int {
		mu.Lock()
		defer mu.Unlock()
		if r.job == nil {
			return 0
		}
		return len(r.job.Checkpoints())
	}
	var end ended
	early := false
	if !poll.Until(2*time.Minute, 5*time.Millisecond, func() bool {
		select {
		case end = <-done:
			early = true
			return true
		default:
			return completed() >= minCkpts
		}
	}) {
		t.Fatalf("%d checkpoints did not complete within 2 minutes (%d did)", minCkpts, completed())
	}
	if !early {
		cancel()
		end = <-done
	}
	if end.err != nil {
		t.Fatalf("stopped run: %v", end.err)
	}
	if n := completed(); n < minCkpts {
		t.Fatalf("the run ended after %d checkpoints, before %d", n, minCkpts)
	}
	r.res = end.res
	st, err := store.NewLocal(r.stateDir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if r.listed, err = st.List(context.Background(), "keycount"); err != nil {
		t.Fatal(err)
	}
	return r
}

// manifest reads checkpoint id's manifest.
func (r stoppedRun) manifest(t *testing.T, id uint64) *store.Manifest {
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
