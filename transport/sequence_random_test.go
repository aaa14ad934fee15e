package transport

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/weirstream/weir/internal/testseed"
)

// TestSeqCheckerRandom drives SeqChecker with random traffic on a few links:
// senders that restart with a new gen, links that are reset, and (in half of
// the runs) a network that drops, duplicates and reorders. Each verdict is
// compared with an oracle that only looks at the history of accepted
// messages; a clean network must give InOrder for everything.
func TestSeqCheckerRandom(t *testing.T) {
	testseed.Run(t, 300, 50, func(seed uint64) { runSeqRandom(t, seed) })
}

type simMsg struct {
	gen int
	seq uint64
}

type simLink struct {
	name     string
	gen      int
	next     uint64
	flight   []simMsg
	sent     int
	accepted map[simMsg]bool // accepted InOrder since the last reset
	maxGen   int             // highest gen the checker has been shown
	checked  bool            // whether any message was checked yet
}

func runSeqRandom(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, seed>>32))
	faulty := rng.IntN(2) == 0
	where := fmt.Sprintf("seed %d (replay: go test -run TestSeqCheckerRandom ./transport -seed=%d) faulty=%v", seed, seed, faulty)

	c := NewSeqChecker()
	links := make([]*simLink, 1+rng.IntN(3))
	for i := range links {
		links[i] = &simLink{name: fmt.Sprintf("src-%d", i), gen: rng.IntN(3), next: 1, accepted: map[simMsg]bool{}}
	}
	var acceptedTotal, sentTotal int
	deliver := func(l *simLink, m simMsg, step int) {
		want := Gap
		switch {
		case l.checked && m.gen < l.maxGen:
			want = Stale
		case l.accepted[m]:
			want = Duplicate
		case m.seq == 1 || l.accepted[simMsg{m.gen, m.seq - 1}]:
			want = InOrder
		}
		got := c.Check(l.name, m.gen, m.seq)
		if got != want {
			t.Fatalf("%s: step %d: %s gen %d seq %d: verdict %v, oracle says %v", where, step, l.name, m.gen, m.seq, got, want)
		}
		if !faulty && got != InOrder {
			t.Fatalf("%s: step %d: clean network, %s gen %d seq %d: %v", where, step, l.name, m.gen, m.seq, got)
		}
		if got == InOrder {
			l.accepted[m] = true
			acceptedTotal++
		}
		if !l.checked || m.gen > l.maxGen {
			l.maxGen, l.checked = m.gen, true
		}
	}

	const steps = 2000
	for step := range steps {
		l := links[rng.IntN(len(links))]
		switch r := rng.IntN(100); {
		case r < 45:
			l.flight = append(l.flight, simMsg{l.gen, l.next})
			l.next++
			l.sent++
			sentTotal++
		case r < 48: // sender restarts as a new incarnation
			l.gen++
			l.next = 1
		case r < 50: // both ends restart the link in the same gen
			if len(l.flight) == 0 {
				l.next = 1
				c.Reset(l.name)
				l.accepted = map[simMsg]bool{}
			}
		default:
			if len(l.flight) == 0 {
				continue
			}
			i := 0
			f := rng.IntN(100)
			if faulty && f < 5 { // reorder: deliver a later message first
				i = rng.IntN(len(l.flight))
			}
			m := l.flight[i]
			switch {
			case faulty && f >= 5 && f < 10: // duplicate: deliver, keep a copy in flight
				deliver(l, m, step)
				continue
			case faulty && f >= 10 && f < 15: // drop
			default:
				deliver(l, m, step)
			}
			l.flight = append(l.flight[:i], l.flight[i+1:]...)
		}
	}
	for _, l := range links { // drain in order
		for _, m := range l.flight {
			deliver(l, m, steps)
		}
		l.flight = nil
	}
	if !faulty && acceptedTotal != sentTotal {
		t.Fatalf("%s: clean network: %d sent, %d accepted", where, sentTotal, acceptedTotal)
	}
	// Accepted messages of each gen form a prefix 1..k: nothing after a lost
	// message was ever accepted.
	for _, l := range links {
		top := map[int]uint64{}
		count := map[int]uint64{}
		for m := range l.accepted {
			top[m.gen] = max(top[m.gen], m.seq)
			count[m.gen]++
		}
		for g := range top {
			if top[g] != count[g] {
				t.Fatalf("%s: %s gen %d: accepted %d messages up to seq %d: not a prefix", where, l.name, g, count[g], top[g])
			}
		}
	}
}
