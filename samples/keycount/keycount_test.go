package keycount

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/weirstream/weir"
)

// verifyCounts checks the output file with Verify.
func verifyCounts(t *testing.T, path string, n int64, k int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := Verify(f, n, k); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func TestKeycountExactlyOnceInOrder(t *testing.T) {
	const n, k = 20000, 100
	for _, p := range []int{1, 2, 4} {
		t.Run(fmt.Sprintf("p=%d", p), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out.jsonl")
			g, err := Build(Config{Records: n, Keys: k, Parallelism: p, Out: out})
			if err != nil {
				t.Fatal(err)
			}
			res, err := weir.Run(context.Background(), g)
			if err != nil {
				t.Fatal(err)
			}
			if res.RecordsIn != n || res.RecordsOut != n {
				t.Fatalf("records in/out = %d/%d, want %d", res.RecordsIn, res.RecordsOut, n)
			}
			verifyCounts(t, out, n, k)
		})
	}
}

// TestKeysAreFormattedLikeSprintf checks the keys cut from one string
// against fmt's "k%06d", across the widths (padding, six digits, more).
func TestKeysAreFormattedLikeSprintf(t *testing.T) {
	keys := Keys(1_000_012)
	if len(keys) != 1_000_012 {
		t.Fatalf("%d keys, want 1000012", len(keys))
	}
	for _, i := range []int{0, 1, 9, 10, 99, 100, 9999, 10000, 99999, 100000, 123456, 999999, 1_000_000, 1_000_011} {
		if want := fmt.Sprintf("k%06d", i); keys[i] != want {
			t.Errorf("key %d is %q, want %q", i, keys[i], want)
		}
	}
	for i := range keys {
		if keys[i] != fmt.Sprintf("k%06d", i) {
			t.Fatalf("key %d is %q, want %q", i, keys[i], fmt.Sprintf("k%06d", i))
		}
	}
	if got := Keys(0); len(got) != 0 {
		t.Errorf("Keys(0) has %d keys", len(got))
	}
}
