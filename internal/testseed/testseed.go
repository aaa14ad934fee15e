// Package testseed lets randomised tests replay one run: a test prints its
// seed, and -seed=N (or WEIR_SEED=N) makes it run that seed alone.
package testseed

import (
	"flag"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"
)

var seedFlag = flag.Uint64("seed", 0, "replay one randomised run with this seed (or set WEIR_SEED)")

// Replay returns the seed asked for by -seed or WEIR_SEED, if any.
func Replay(t *testing.T) (uint64, bool) {
	t.Helper()
	if *seedFlag != 0 {
		return *seedFlag, true
	}
	if v := os.Getenv("WEIR_SEED"); v != "" {
		seed, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("WEIR_SEED=%q: %v", v, err)
		}
		return seed, true
	}
	return 0, false
}

// Run calls run with the seed asked for by Replay, or else with runs seeds
// drawn from a logged master seed (short of them under -short: shortRuns).
// It reports whether it replayed one seed.
func Run(t *testing.T, runs, shortRuns int, run func(seed uint64)) (replayed bool) {
	t.Helper()
	if seed, ok := Replay(t); ok {
		t.Logf("replaying seed %d", seed)
		run(seed)
		return true
	}
	master := uint64(time.Now().UnixNano())
	t.Logf("master seed %d", master)
	rng := rand.New(rand.NewPCG(master, 0))
	if testing.Short() {
		runs = shortRuns
	}
	for range runs {
		run(rng.Uint64())
	}
	return false
}
