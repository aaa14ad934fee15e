package bigstate

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/samples/keycount"
)

func TestBigstateExactlyOnceWithItsState(t *testing.T) {
	const n, k, vb = 20000, 500, 96
	for _, p := range []int{1, 2} {
		t.Run(fmt.Sprintf("p=%d", p), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out.jsonl")
			g, err := Build(Config{Records: n, Keys: k, ValueBytes: vb, Parallelism: p, Out: out})
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
			if err := VerifyFile(out, n, k, vb); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestBigstateRestoresItsValues: a rerun restored from a checkpoint taken
// mid-run continues every key's value where the checkpoint left it (each
// digest after the restore checks the whole value).
func TestBigstateRestoresItsValues(t *testing.T) {
	const n, k, vb = 60000, 300, 128
	dir := t.TempDir()
	out, stateDir := filepath.Join(dir, "out.jsonl"), filepath.Join(dir, "state")
	g, err := Build(Config{Records: n, Keys: k, ValueBytes: vb, Parallelism: 2, Out: out, SleepMs: 0.03})
	if err != nil {
		t.Fatal(err)
	}
	cp := weir.CheckpointConfig{Mode: weir.CheckpointUnaligned, Interval: 20 * time.Millisecond, Retain: 1000, StateDir: stateDir}
	if _, err := weir.Run(context.Background(), g, weir.WithCheckpoints(cp)); err != nil {
		t.Fatal(err)
	}
	ids := storedCheckpoints(t, stateDir, 3)
	mid := ids[len(ids)/2]
	res, err := weir.Run(context.Background(), g, weir.WithCheckpoints(cp), weir.WithRestore(strconv.FormatUint(mid, 10)))
	if err != nil {
		t.Fatal(err)
	}
	if res.RestoredFrom != mid || res.Restore == nil || res.Restore.RemoteSections == 0 {
		t.Fatalf("restored from %d with %+v, want checkpoint %d read from the store", res.RestoredFrom, res.Restore, mid)
	}
	if err := VerifyFile(out, n, k, vb); err != nil {
		t.Fatalf("after restoring checkpoint %d: %v", mid, err)
	}
}

// TestVerifyRejects: the verifier catches a damaged value, a repeated and a
// missing record.
func TestVerifyRejects(t *testing.T) {
	const k, vb = 2, 8
	var lines []string
	damaged := ""
	for _, key := range keycount.Keys(k) {
		v := InitialValue(key, vb)
		for c := int64(1); c <= 3; c++ {
			Update(v, c)
			lines = append(lines, fmt.Sprintf(`{"key":%q,"count":%d,"crc":%d}`, key, c, Checksum(v)))
			if damaged == "" && c == 2 {
				damaged = fmt.Sprintf(`{"key":%q,"count":%d,"crc":%d}`, key, c, Checksum(v)^1)
			}
		}
	}
	good := strings.Join(lines, "\n") + "\n"
	if err := Verify(strings.NewReader(good), 6, k, vb); err != nil {
		t.Fatalf("good output: %v", err)
	}
	for name, tc := range map[string]struct {
		text, want string
	}{
		"damaged value": {strings.Replace(good, lines[1], damaged, 1), "state lost or damaged"},
		"repeated":      {strings.Replace(good, lines[1], lines[0], 1), "repeated"},
		"missing":       {strings.Replace(good, lines[1]+"\n", "", 1), "missing"},
	} {
		err := Verify(strings.NewReader(tc.text), 6, k, vb)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error saying %q", name, err, tc.want)
		}
	}
	if _, err := Build(Config{Records: 1, Keys: 1, ValueBytes: 0, Parallelism: 1}); err == nil {
		t.Error("value bytes 0 accepted")
	}
	if err := VerifyFile(filepath.Join(t.TempDir(), "none"), 1, 1, 1); err == nil || !os.IsNotExist(unwrapAll(err)) {
		t.Errorf("missing file: %v", err)
	}
}

func unwrapAll(err error) error {
	for {
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return err
		}
		err = u.Unwrap()
	}
}
