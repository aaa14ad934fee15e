// Package testseed lets randomised tests replay one run: a test prints its
// seed, and -seed=N (or WEIR_SEED=N) makes it run that seed alone.
package testseed

import (
	"flag"
	"os"
	"strconv"
	"testing"
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
