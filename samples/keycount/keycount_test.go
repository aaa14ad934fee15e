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
