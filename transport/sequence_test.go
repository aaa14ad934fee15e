package transport

import (
	"sync"
	"testing"
)

type seqStep struct {
	op   string // "check" (default), "reset", "forget"
	from string
	gen  int
	seq  uint64
	want Verdict
}

func TestSeqCheckerTable(t *testing.T) {
	tests := []struct {
		name  string
		steps []seqStep
	}{
		{"in order", []seqStep{{from: "a", seq: 1, want: InOrder}, {from: "a", seq: 2, want: InOrder}, {from: "a", seq: 3, want: InOrder}}},
		{"first message must be 1", []seqStep{{from: "a", seq: 2, want: Gap}, {from: "a", seq: 1, want: InOrder}, {from: "a", seq: 2, want: InOrder}}},
		{"duplicate", []seqStep{{from: "a", seq: 1, want: InOrder}, {from: "a", seq: 2, want: InOrder}, {from: "a", seq: 2, want: Duplicate}, {from: "a", seq: 1, want: Duplicate}, {from: "a", seq: 3, want: InOrder}}},
		{"seq zero", []seqStep{{from: "a", seq: 0, want: Duplicate}, {from: "a", seq: 1, want: InOrder}}},
		{"gap is sticky", []seqStep{{from: "a", seq: 1, want: InOrder}, {from: "a", seq: 3, want: Gap}, {from: "a", seq: 4, want: Gap}, {from: "a", seq: 2, want: InOrder}, {from: "a", seq: 3, want: InOrder}}},
		{"reordered pair", []seqStep{{from: "a", seq: 1, want: InOrder}, {from: "a", seq: 3, want: Gap}, {from: "a", seq: 2, want: InOrder}, {from: "a", seq: 3, want: InOrder}, {from: "a", seq: 3, want: Duplicate}}},
		{"links are independent", []seqStep{{from: "a", seq: 1, want: InOrder}, {from: "b", seq: 1, want: InOrder}, {from: "a", seq: 2, want: InOrder}, {from: "b", seq: 3, want: Gap}}},
		{"new gen restarts at 1", []seqStep{{from: "a", gen: 1, seq: 1, want: InOrder}, {from: "a", gen: 1, seq: 2, want: InOrder}, {from: "a", gen: 2, seq: 1, want: InOrder}, {from: "a", gen: 2, seq: 2, want: InOrder}}},
		{"new gen not at 1 is a gap", []seqStep{{from: "a", gen: 1, seq: 1, want: InOrder}, {from: "a", gen: 2, seq: 2, want: Gap}, {from: "a", gen: 1, seq: 2, want: Stale}, {from: "a", gen: 2, seq: 3, want: Gap}, {from: "a", gen: 2, seq: 1, want: InOrder}}},
		{"lower gen is stale", []seqStep{{from: "a", gen: 3, seq: 1, want: InOrder}, {from: "a", gen: 2, seq: 2, want: Stale}, {from: "a", gen: 0, seq: 1, want: Stale}, {from: "a", gen: 3, seq: 2, want: InOrder}}},
		{"first contact at any gen", []seqStep{{from: "a", gen: 5, seq: 1, want: InOrder}, {from: "a", gen: 4, seq: 1, want: Stale}}},
		{"reset keeps gen floor", []seqStep{{from: "a", gen: 2, seq: 1, want: InOrder}, {from: "a", gen: 2, seq: 2, want: InOrder}, {op: "reset", from: "a"}, {from: "a", gen: 1, seq: 1, want: Stale}, {from: "a", gen: 2, seq: 1, want: InOrder}}},
		{"reset clears a gap", []seqStep{{from: "a", seq: 1, want: InOrder}, {from: "a", seq: 5, want: Gap}, {op: "reset", from: "a"}, {from: "a", seq: 1, want: InOrder}}},
		{"reset of unknown link", []seqStep{{op: "reset", from: "a"}, {from: "a", seq: 1, want: InOrder}}},
		{"forget", []seqStep{{from: "a", gen: 2, seq: 1, want: InOrder}, {op: "forget", from: "a"}, {from: "a", gen: 1, seq: 1, want: InOrder}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewSeqChecker()
			for i, s := range tt.steps {
				switch s.op {
				case "reset":
					c.Reset(s.from)
				case "forget":
					c.Forget(s.from)
				default:
					if got := c.Check(s.from, s.gen, s.seq); got != s.want {
						t.Fatalf("step %d: Check(%q, gen %d, seq %d) = %v, want %v", i, s.from, s.gen, s.seq, got, s.want)
					}
				}
			}
		})
	}
}

func TestSeqCheckerZeroValue(t *testing.T) {
	var c SeqChecker
	c.Reset("a")
	c.Forget("a")
	if v := c.Check("a", 0, 1); v != InOrder {
		t.Fatalf("zero SeqChecker: %v", v)
	}
}

func TestVerdictString(t *testing.T) {
	for v, want := range map[Verdict]string{InOrder: "in-order", Duplicate: "duplicate", Gap: "gap", Stale: "stale", 0: "Verdict(0)"} {
		if v.String() != want {
			t.Errorf("%d.String() = %q, want %q", int(v), v.String(), want)
		}
	}
}

func TestSeqStamper(t *testing.T) {
	var s SeqStamper
	for want := uint64(1); want <= 3; want++ {
		if got := s.Next("a→b"); got != want {
			t.Fatalf("Next = %d, want %d", got, want)
		}
	}
	if got := s.Next("a→c"); got != 1 {
		t.Fatalf("other link: Next = %d, want 1", got)
	}
	s.Reset("a→b")
	if got := s.Next("a→b"); got != 1 {
		t.Fatalf("after Reset: Next = %d, want 1", got)
	}
	for i, step := range []struct {
		gen  int
		want uint64
	}{{0, 2}, {0, 3}, {1, 1}, {1, 2}, {0, 1}, {2, 1}} {
		if got := s.NextGen("a→b", step.gen); got != step.want {
			t.Fatalf("step %d: NextGen(gen %d) = %d, want %d", i, step.gen, got, step.want)
		}
	}
}

func TestSeqStamperConcurrent(t *testing.T) {
	var s SeqStamper
	const workers, each = 4, 500
	got := make([][]uint64, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for range each {
				got[w] = append(got[w], s.Next("l"))
			}
		})
	}
	wg.Wait()
	seen := make(map[uint64]bool)
	for w := range workers {
		for i, n := range got[w] {
			if i > 0 && n <= got[w][i-1] {
				t.Fatalf("worker %d got %d after %d", w, n, got[w][i-1])
			}
			if seen[n] {
				t.Fatalf("seq %d handed out twice", n)
			}
			seen[n] = true
		}
	}
	for n := uint64(1); n <= workers*each; n++ {
		if !seen[n] {
			t.Fatalf("seq %d never handed out", n)
		}
	}
}
