package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weirstream/weir/samples/backpressure"
	"github.com/weirstream/weir/samples/keycount"
	"github.com/weirstream/weir/samples/keysum"
	"github.com/weirstream/weir/store"
)

// restoreChain is a job run, SIGKILLed, restored with other parallelism
// flags and SIGKILLed again, as often as it has steps, then restored a last
// time and run to its end.
type restoreChain struct {
	job, mode string
	n         int64
	keys      int // 0: the job takes no --keys
	// steps are the parallelism flags of each run: the first runs fresh,
	// the others with --restore latest; every run but the last is killed.
	steps [][]string
	// duringReplay makes the restored runs that are killed checkpoint every
	// millisecond, under heavier backpressure, and kills them after their
	// first checkpoint: one taken while they still replay restored channel
	// state, whose rest it keeps as an older replay round.
	duringReplay bool
	// verify checks the committed output file.
	verify func(out string) error
}

func (c restoreChain) name() string {
	var ps []string
	for _, s := range c.steps {
		ps = append(ps, strings.Join(s, " "))
	}
	name := fmt.Sprintf("%s/%s/%s", c.job, c.mode, strings.Join(ps, " → "))
	if c.duringReplay {
		name += "/killed during replay"
	}
	return name
}

// run runs the chain in a fresh directory and returns the state dir.
func (c restoreChain) run(t *testing.T, bin string) string {
	t.Helper()
	dir := t.TempDir()
	out, stateDir := filepath.Join(dir, "out.jsonl"), filepath.Join(dir, "state")
	sleep := "0.02"
	if c.duringReplay {
		sleep = "0.05"
	}
	args := []string{"run", c.job, "--records", fmt.Sprint(c.n), "--out", out, "--state-dir", stateDir,
		"--sleep-ms", sleep, "--checkpoint-mode", c.mode, "--checkpoint-interval", "50ms", "--log-level", "warn"}
	if c.keys > 0 {
		args = append(args, "--keys", fmt.Sprint(c.keys))
	}
	if c.duringReplay {
		args = append(args, "--channel-capacity", "64")
	}
	last := len(c.steps) - 1
	for i, step := range c.steps[:last] {
		runArgs := append(append([]string{}, args...), step...)
		minID := uint64(3)
		if i > 0 {
			runArgs = append(runArgs, "--restore", "latest")
			// Killed after two checkpoints of its own, or its first.
			ids := checkpointIDs(t, stateDir, c.job)
			minID = ids[len(ids)-1] + 2
			if c.duringReplay {
				runArgs = append(runArgs, "--checkpoint-interval", "1ms")
				minID--
			}
		}
		killAfterJobCheckpoints(t, bin, runArgs, stateDir, c.job, minID)
		t.Logf("run %d (%s) killed", i+1, strings.Join(step, " "))
		logCommittedAtKill(t, out, int(c.n))
		if i > 0 && c.duringReplay {
			t.Logf("after run %d: %d channels of the latest checkpoint hold more than one replay round", i+1, multiRoundChannels(t, stateDir, c.job))
		}
	}
	code, stderr := runNode(t, bin, append(append(append([]string{}, args...), c.steps[last]...), "--restore", "latest")...)
	if code != 0 || strings.Contains(stderr, `"level":"error"`) {
		t.Fatalf("last restore (%v) exited %d:\n%s", c.steps[last], code, stderr)
	}
	if err := c.verify(out); err != nil {
		t.Fatalf("output after %s: %v", c.name(), err)
	}
	return stateDir
}

// multiRoundChannels counts the channels of job's latest checkpoint whose
// state holds more than one replay round.
func multiRoundChannels(t *testing.T, stateDir, job string) int {
	t.Helper()
	st, err := store.NewLocal(stateDir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	m, err := st.Latest(t.Context(), job)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ts := range m.Tasks {
		for _, cb := range ts.Channels {
			if len(cb.Rounds) > 1 {
				n++
			}
		}
	}
	return n
}

func verifyKeysum(n int64, k int) func(string) error {
	return func(out string) error {
		f, err := os.Open(out)
		if err != nil {
			return err
		}
		defer f.Close()
		return keysum.Verify(f, n, k)
	}
}

// TestRestoreAfterRestoreExactlyOnce kills a job, restores it at another
// parallelism, kills it again mid-run and restores it at a third: the
// committed output is exactly one run's. keycount (keyed count, a file sink
// that is not keyed: each key's counts must come in order), keysum (forward,
// broadcast and keyed edges, its keyed sum rescaled) and backpressure
// (non-keyed shuffles only), scaling up then down and down then up, with the
// job-wide --parallelism and with --operator-parallelism; one chain kills
// the restored run after a checkpoint taken while it still replayed (its
// rest stored as an older replay round; the test logs how many channels hold
// several). A few cells keep the test short.
func TestRestoreAfterRestoreExactlyOnce(t *testing.T) {
	t.Parallel()
	bin := buildNode(t)
	// 400,000 records: at 200,000 a restored run at 5 instances was
	// killed with 80 % of the output committed, too near its end.
	const n, k = 400000, 500
	p := func(m int) []string { return []string{"--parallelism", fmt.Sprint(m)} }
	ops := func(set string) []string { return []string{"--parallelism", "2", "--operator-parallelism", set} }
	keycountOK := func(out string) error { return keycount.VerifyFile(out, n, k) }
	for _, c := range []restoreChain{
		{job: "keycount", mode: "unaligned", n: n, keys: k, steps: [][]string{p(2), p(5), p(3)}, verify: keycountOK},
		{job: "keycount", mode: "unaligned", n: n, keys: k, steps: [][]string{p(2), p(5), p(3)}, duringReplay: true, verify: keycountOK},
		{job: "keycount", mode: "aligned", n: n, keys: k, steps: [][]string{p(2), p(1), p(4)}, verify: keycountOK},
		{job: "keycount", mode: "unaligned", n: n, keys: k, steps: [][]string{p(2), ops("count=4"), ops("count=1")}, verify: keycountOK},
		// keysum's source feeds weigh over a forward edge; named
		// parallelisms leave both at 2 (TestRestoreSourceOverForwardEdge
		// moves them together); claim, mine and sum keep each key's records in
		// order only when they change together (claim keeps the keys whose
		// index mod its parallelism is its instance).
		{job: "keysum", mode: "unaligned", n: n, keys: k, steps: [][]string{p(2), ops("sum=5"), ops("sum=3")}, verify: verifyKeysum(n, k)},
		{job: "backpressure", mode: "unaligned", n: n, steps: [][]string{p(2), p(3), p(1)},
			verify: func(out string) error { return backpressure.VerifyFile(out, n) }},
	} {
		t.Run(c.name(), func(t *testing.T) { t.Parallel(); c.run(t, bin) })
	}
}

// TestOperatorParallelismFreshAndRefused runs keycount fresh with
// --operator-parallelism count=3 (exactly once, its manifests at count 3,
// source 2), and refuses a restore that names the sink, which holds
// non-keyed state, at another parallelism than its checkpoint's, saying why,
// before anything is deleted.
func TestOperatorParallelismFreshAndRefused(t *testing.T) {
	t.Parallel()
	bin := buildNode(t)
	const n, k = 100000, 50
	dir := t.TempDir()
	out, stateDir := filepath.Join(dir, "out.jsonl"), filepath.Join(dir, "state")
	args := []string{"run", "keycount", "--records", fmt.Sprint(n), "--keys", fmt.Sprint(k), "--out", out,
		"--state-dir", stateDir, "--checkpoint-interval", "20ms", "--log-level", "warn", "--parallelism", "2"}
	if code, stderr := runNode(t, bin, append(args, "--operator-parallelism", "count=3")...); code != 0 {
		t.Fatalf("run with count=3 exited %d:\n%s", code, stderr)
	}
	if err := keycount.VerifyFile(out, n, k); err != nil {
		t.Fatal(err)
	}
	st, err := store.NewLocal(stateDir)
	if err != nil {
		t.Fatal(err)
	}
	man, err := st.Latest(t.Context(), "keycount")
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(man.Parallelism); got != "map[count:3 sink:1 source:2]" {
		t.Fatalf("manifest %d: parallelism %s, want count 3, sink 1, source 2", man.CheckpointID, got)
	}
	before := checkpointIDs(t, stateDir, "keycount")
	code, stderr := runNode(t, bin, append(args, "--restore", "latest", "--operator-parallelism", "sink=3")...)
	// The file sink stages one file's output: with checkpoints it has one
	// instance, which the job says before it starts anything.
	want := fmt.Sprintf("operator \"sink\": file sink %s: with checkpoints it runs as one instance, not 3", out)
	if code != 1 || !strings.Contains(stderr, want) {
		t.Fatalf("restore with sink=3 exited %d, want 1 saying %q:\n%s", code, want, stderr)
	}
	if after := checkpointIDs(t, stateDir, "keycount"); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("the refused restore changed the checkpoints from %v to %v", before, after)
	}
}
