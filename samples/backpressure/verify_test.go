package backpressure

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weirstream/weir"
)

// TestVerifyAcceptsARunAndNamesEachFault: a run's output passes; a repeated,
// missing, out-of-range, short-hopped or wrong-payload record is named.
func TestVerifyAcceptsARunAndNamesEachFault(t *testing.T) {
	const n = 3000
	out := filepath.Join(t.TempDir(), "out.jsonl")
	g, err := Build(Config{Records: n, Parallelism: 2, Out: out})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := weir.Run(context.Background(), g); err != nil {
		t.Fatal(err)
	}
	if err := VerifyFile(out, n); err != nil {
		t.Fatalf("run output: %v", err)
	}

	line := func(r Record) string {
		b, _ := json.Marshal(r)
		return string(b) + "\n"
	}
	ok := func(id int64) Record { return Record{ID: id, Hops: 3, Payload: payloads[id%int64(len(payloads))]} }
	tests := []struct {
		name, out, wants string
	}{
		{"repeated", line(ok(0)) + line(ok(0)), "id 0 repeated"},
		{"missing", line(ok(0)), "id 1 missing"},
		{"out of range", line(ok(2)), "outside [0, 2)"},
		{"short hops", line(Record{ID: 0, Hops: 2, Payload: payloads[0]}), "passed 2 map stages"},
		{"payload", line(Record{ID: 0, Hops: 3, Payload: "x"}), `payload "x"`},
		{"not json", "{\n", "line 1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := Verify(strings.NewReader(tc.out), 2)
			if err == nil || !strings.Contains(err.Error(), tc.wants) {
				t.Fatalf("error %v, want one containing %q", err, tc.wants)
			}
		})
	}
}
