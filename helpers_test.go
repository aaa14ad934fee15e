package weir_test

import (
	"context"
	"testing"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/samples/keycount"
)

// verifyKeycount checks that the keycount output file holds counts 1..n/k
// of each of k keys, each once and in order.
func verifyKeycount(t *testing.T, path string, n int64, k int) {
	t.Helper()
	if err := keycount.VerifyFile(path, n, k); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// restoreLatest runs g restored from the latest checkpoint to its end.
func restoreLatest(t *testing.T, g *weir.Graph, opts ...weir.RunOption) *weir.Result {
	t.Helper()
	res, err := weir.Run(context.Background(), g, append(opts, weir.WithRestore("latest"))...)
	if err != nil {
		t.Fatalf("restore latest: %v", err)
	}
	if res.RestoredFrom == 0 {
		t.Fatal("the second run did not restore")
	}
	return res
}
