package rescale

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/weirstream/weir/cluster/placement"
	"github.com/weirstream/weir/internal/testseed"
	"github.com/weirstream/weir/keygroups"
)

// keycount is the shape of samples/keycount: source → hash → count → sink,
// the count → sink edge implicit (forward at equal parallelism).
func keycount(t *testing.T, max, p int) Topology {
	t.Helper()
	tab, err := keygroups.Contiguous(max, p)
	if err != nil {
		t.Fatal(err)
	}
	return Topology{Job: "keycount", MaxParallelism: max,
		Operators: []Operator{{Name: "source", Parallelism: p, Source: true}, {Name: "count", Parallelism: p, Table: tab}, {Name: "sink", Parallelism: p}},
		Edges:     []Edge{{From: "source", To: "count", Partitioner: "hash"}, {From: "count", To: "sink", Partitioner: "forward", Implicit: true}}}
}

func mustPlan(t *testing.T, in Input) *Plan {
	t.Helper()
	p, err := NewPlan(in)
	if err != nil {
		t.Fatalf("NewPlan: %v", err)
	}
	return p
}

// balanced fails unless every instance of tab owns ⌊max/p⌋ or ⌈max/p⌉ groups.
func balanced(t *testing.T, tab *keygroups.Table) {
	t.Helper()
	lo, hi := tab.MaxParallelism/tab.Parallelism, (tab.MaxParallelism+tab.Parallelism-1)/tab.Parallelism
	for i, n := range tab.Counts() {
		if n < lo || n > hi {
			t.Fatalf("instance %d of %d owns %d groups, want %d..%d", i, tab.Parallelism, n, lo, hi)
		}
	}
}

func TestPlanFourToFiveMovesFewest(t *testing.T) {
	p := mustPlan(t, Input{Seq: 1, Topology: keycount(t, 128, 4), Request: []Target{{"count", 5}}})
	c, ok := p.Change("count")
	if !ok || c.From != 4 || c.To != 5 {
		t.Fatalf("changes %+v, want count 4→5", p.Changes)
	}
	if len(c.Moves) > 26 || len(c.Moves) != c.Minimum || c.Minimum != 25 {
		t.Fatalf("4→5 of 128 moves %d (minimum %d), want ≤ 26 and the minimum 25", len(c.Moves), c.Minimum)
	}
	balanced(t, c.New)
	if fmt.Sprint(c.Added, c.Removed) != "[4] []" || c.New.Epoch != 1 {
		t.Fatalf("added %v removed %v epoch %d, want [4] [] 1", c.Added, c.Removed, c.New.Epoch)
	}
	for _, m := range c.Moves {
		if m.To != 4 || c.Old.Owner(m.Group) != m.From || c.New.Owner(m.Group) != 4 {
			t.Fatalf("move %+v does not go from its old owner to the new instance", m)
		}
	}
	// Flink's ranges would move 62: the plan is the one Rescale computes.
	if sw := fmt.Sprint(p.Partitioners); sw != "[{count sink forward rebalance}]" {
		t.Fatalf("partitioner switches %s, want count → sink forward → rebalance", sw)
	}
}

func TestPlanScaleDownRemovesInstances(t *testing.T) {
	p := mustPlan(t, Input{Seq: 2, Topology: keycount(t, 128, 4), Request: []Target{{"count", 1}, {"sink", 1}}})
	c, _ := p.Change("count")
	if fmt.Sprint(c.Removed) != "[1 2 3]" || len(c.Moves) != 96 || c.Minimum != 96 {
		t.Fatalf("4→1: removed %v, moves %d (min %d), want [1 2 3], 96, 96", c.Removed, len(c.Moves), c.Minimum)
	}
	s, _ := p.Change("sink")
	if s.New != nil || len(s.Moves) != 0 || fmt.Sprint(s.Removed) != "[1 2 3]" {
		t.Fatalf("stateless sink change %+v, want 3 instances removed and no table", s)
	}
	if len(p.Partitioners) != 0 {
		t.Fatalf("switches %v, want none (count and sink stay equal)", p.Partitioners)
	}
}

// TestPlanStagingSinkGrows: a sink that stages output per checkpoint may
// gain instances (they join the commit protocol empty; the others keep
// their transactions), alone or with count, while the job is otherwise
// unchanged; the flag survives the plan's encoding.
func TestPlanStagingSinkGrows(t *testing.T) {
	p := mustPlan(t, Input{Seq: 1, Topology: keycount(t, 128, 2).WithStagedOutput("sink"), Request: []Target{{"count", 3}, {"sink", 3}}})
	s, _ := p.Change("sink")
	if fmt.Sprint(s.Added) != "[2]" || len(s.Removed) != 0 {
		t.Fatalf("staging sink 2→3: added %v, removed %v; want [2] and none", s.Added, s.Removed)
	}
	data, err := p.Encode()
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodePlan(data)
	if err != nil {
		t.Fatal(err)
	}
	if op := back.Input.Topology.Operators[2]; op.Name != "sink" || !op.StagesOutput {
		t.Fatalf("decoded topology's sink %+v, want StagesOutput", op)
	}
}

func TestPlanForwardSetChangesTogether(t *testing.T) {
	topo := keycount(t, 128, 2)
	topo.Operators = append(topo.Operators, Operator{Name: "audit", Parallelism: 2})
	topo.Edges[1].Implicit = false // count → sink is an explicit forward edge
	topo.Edges = append(topo.Edges, Edge{From: "sink", To: "audit", Partitioner: "forward"})
	p := mustPlan(t, Input{Seq: 1, Topology: topo, Request: []Target{{"sink", 3}}})
	if got := fmt.Sprint(p.Together); got != "[[count sink audit]]" {
		t.Fatalf("together %s, want [[count sink audit]]", got)
	}
	if len(p.Changes) != 3 {
		t.Fatalf("changes %s, want count, sink and audit at 3", p.Summary())
	}
	if got := p.Summary(); got != "count 2→3 moves 42 of 128 (min 42), sink 2→3, audit 2→3" {
		t.Fatalf("summary %q", got)
	}
}

func TestPlanRefusals(t *testing.T) {
	fwd := keycount(t, 128, 2)
	fwd.Edges[1].Implicit = false
	srcFwd := keycount(t, 128, 2)
	srcFwd.Edges[0] = Edge{From: "source", To: "count", Partitioner: "forward"}
	cases := []struct {
		name string
		topo Topology
		req  []Target
		want string
	}{
		{"unknown operator", keycount(t, 128, 2), []Target{{"cont", 3}}, `no operator "cont" (operators: source, count, sink)`},
		{"zero", keycount(t, 128, 2), []Target{{"count", 0}}, `operator "count"`},
		{"above max", keycount(t, 128, 2), []Target{{"count", 129}}, `operator "count"`},
		{"twice", keycount(t, 128, 2), []Target{{"count", 3}, {"count", 4}}, `operator "count" asked for twice`},
		{"empty", keycount(t, 128, 2), nil, "no operator to rescale"},
		{"source", keycount(t, 128, 2), []Target{{"source", 3}}, `source "source" cannot change parallelism live`},
		{"source behind forward", srcFwd, []Target{{"count", 3}}, `source "source" cannot change parallelism live`},
		{"operator state", keycount(t, 128, 2).WithOperatorState("sink"), []Target{{"sink", 3}}, `operator "sink" holds non-keyed state`},
		{"staging sink shrinks", keycount(t, 128, 3).WithStagedOutput("sink"), []Target{{"sink", 2}}, `sink "sink" stages its output per instance until a checkpoint completes and cannot hand it to another instance: it can grow from 3 instances, not shrink to 2`},
		{"staging sink shrinks with count", keycount(t, 128, 3).WithStagedOutput("sink"), []Target{{"count", 1}, {"sink", 1}}, `sink "sink" stages its output per instance`},
		{"bounded sink grows", bounded(keycount(t, 128, 1), "sink", 1, "file sink out.jsonl: with checkpoints it runs as one instance"), []Target{{"sink", 2}}, `operator "sink": file sink out.jsonl: with checkpoints it runs as one instance, not 2`},
		{"forward conflict", fwd, []Target{{"count", 3}, {"sink", 4}}, `joined by forward edges and must run at one parallelism, asked for 3 and 4`},
		{"nothing", keycount(t, 128, 2), []Target{{"count", 2}}, "already runs at the parallelism asked for"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewPlan(Input{Seq: 1, Topology: tc.topo, Request: tc.req})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want one containing %q", err, tc.want)
			}
		})
	}
	// A staging sink that hands its output off shrinks.
	if _, err := NewPlan(Input{Seq: 1, Topology: keycount(t, 128, 3).WithStagedOutput("sink").WithHandOff("sink"), Request: []Target{{"sink", 1}}}); err != nil {
		t.Fatalf("staging sink that hands off, 3 → 1: %v", err)
	}
	_, err := NewPlan(Input{Seq: 1, Topology: keycount(t, 128, 2), Request: []Target{{"count", 2}}})
	if !errors.Is(err, ErrNothingToDo) {
		t.Fatalf("err %v, want ErrNothingToDo", err)
	}
	bad := keycount(t, 128, 2)
	bad.Operators[1].Parallelism = 3
	if _, err := NewPlan(Input{Topology: bad, Request: []Target{{"count", 4}}}); err == nil || !strings.Contains(err.Error(), "its table is for 2 of 128") {
		t.Fatalf("err %v, want the table mismatch named", err)
	}
}

// TestPlanPlacesNewInstancesWhereTheirStateIs: the added count[2] receives
// key groups that node b holds locally, so it goes to b although a has more
// free slots; without state location it goes to a.
func TestPlanPlacesNewInstancesWhereTheirStateIs(t *testing.T) {
	nodes := []placement.Slot{{Node: "a", Free: 4}, {Node: "b", Free: 1}}
	in := Input{Seq: 1, Topology: keycount(t, 128, 2), Request: []Target{{"count", 3}}, Locality: Locality{Nodes: nodes}}
	if got := fmt.Sprint(mustPlan(t, in).Placement); got != "[{count 2 a}]" {
		t.Fatalf("placement without state location %s, want count[2] on a", got)
	}
	c, _ := mustPlan(t, in).Change("count")
	for _, m := range c.Moves {
		in.Locality.Copies = append(in.Locality.Copies, GroupCopy{Operator: "count", Group: m.Group, Node: "b", Bytes: 1000})
	}
	// A group count[2] does not receive counts for nothing.
	in.Locality.Copies = append(in.Locality.Copies, GroupCopy{Operator: "count", Group: 0, Node: "a", Bytes: 1 << 30})
	if got := fmt.Sprint(mustPlan(t, in).Placement); got != "[{count 2 b}]" {
		t.Fatalf("placement with state location %s, want count[2] on b", got)
	}
	in.Locality.Nodes = []placement.Slot{{Node: "a", Free: 0}}
	if _, err := NewPlan(in); !errors.Is(err, placement.ErrNotEnoughSlots) {
		t.Fatalf("err %v, want not enough slots", err)
	}
}

func TestPlanEncodesAndReplays(t *testing.T) {
	local := []GroupCopy{{"count", 90, "c", 7}, {"count", 3, "b", 10}, {"count", 70, "a", 5}}
	in := Input{Seq: 7, Topology: keycount(t, 128, 3), Request: []Target{{"count", 5}, {"sink", 2}},
		Locality: Locality{Nodes: []placement.Slot{{Node: "a", Free: 2}, {Node: "b", Free: 2}, {Node: "c", Free: 2}}, Copies: local}}
	p := mustPlan(t, in)
	for range 5 {
		b, err := p.Encode()
		if err != nil {
			t.Fatal(err)
		}
		q, err := DecodePlan(b)
		if err != nil {
			t.Fatalf("decode: %v", err)
		}
		if q.Summary() != p.Summary() || fmt.Sprint(q.Placement) != fmt.Sprint(p.Placement) || !q.Changes[0].New.Equal(p.Changes[0].New) {
			t.Fatalf("decoded %s %v, want %s %v", q.Summary(), q.Placement, p.Summary(), p.Placement)
		}
	}
	p.Changes[0].New.Owners[0] = 4 // tampered: the input no longer gives this plan
	b, _ := p.Encode()
	if _, err := DecodePlan(b); err == nil || !strings.Contains(err.Error(), "its input gives a different plan") {
		t.Fatalf("tampered plan: err %v, want a replay mismatch", err)
	}
	if _, err := DecodePlan([]byte{0xc1}); err == nil || !strings.Contains(err.Error(), "decode rescale plan") {
		t.Fatalf("garbage: err %v", err)
	}
}

// TestPlanRandomChains runs chains of rescales of count from a random start,
// each plan computed from the table the previous one left: every table is
// balanced, moves exactly the minimum, moves only groups whose owner
// changes, counts epochs, and replays.
func TestPlanRandomChains(t *testing.T) {
	testseed.Run(t, 40, 10, func(seed uint64) {
		rng := rand.New(rand.NewPCG(seed, seed^0x5eed))
		max := []int{128, 7, 100, 1}[rng.IntN(4)]
		p := 1 + rng.IntN(max)
		topo := keycount(t, max, p)
		for step := range 25 {
			to := 1 + rng.IntN(max)
			if to == p {
				continue
			}
			pl, err := NewPlan(Input{Seq: uint64(step + 1), Topology: topo, Request: []Target{{"count", to}, {"sink", to}}})
			if err != nil {
				t.Fatalf("seed %d step %d: %d→%d: %v", seed, step, p, to, err)
			}
			c, _ := pl.Change("count")
			balanced(t, c.New)
			if len(c.Moves) != c.Minimum {
				t.Fatalf("seed %d step %d: %d→%d of %d moves %d, minimum %d", seed, step, p, to, max, len(c.Moves), c.Minimum)
			}
			if got := c.Old.Moved(c.New); len(got) != len(c.Moves) {
				t.Fatalf("seed %d step %d: %d groups change owner, %d moves", seed, step, len(got), len(c.Moves))
			}
			if c.New.Epoch != c.Old.Epoch+1 {
				t.Fatalf("seed %d step %d: epoch %d after %d", seed, step, c.New.Epoch, c.Old.Epoch)
			}
			if err := pl.Replay(); err != nil {
				t.Fatalf("seed %d step %d: %v", seed, step, err)
			}
			topo.Operators[1].Parallelism, topo.Operators[1].Table = to, c.New
			topo.Operators[2].Parallelism = to
			p = to
		}
	})
}

// bounded sets operator name's instance bound in t.
func bounded(t Topology, name string, limit int, why string) Topology {
	for i := range t.Operators {
		if t.Operators[i].Name == name {
			t.Operators[i].MaxInstances, t.Operators[i].Bound = limit, why
		}
	}
	return t
}
