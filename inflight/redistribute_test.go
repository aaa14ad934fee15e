package inflight

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/keygroups"
)

// rec is a test record: the producer that sent it (Src), the consumer its
// channel led to when captured (Dst), its place in the producer's stream (N),
// its key group (G) and a name for hand-written cases.
type rec struct {
	Src, Dst, N, G int
	Name           string
}

// recHash makes a record's key group its G (G < maxParallelism).
func recHash(r rec) uint32 { return uint32(r.G) }

func mustRecords(t testing.TB, max int) Records {
	t.Helper()
	r, err := RecordsOf(recHash, max)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func mustTable(t testing.TB, max int, owners ...int32) *keygroups.Table {
	t.Helper()
	p := int(slices.Max(owners)) + 1
	tab, err := keygroups.FromOwners(max, p, 0, owners)
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

// named makes a batch of records, each a key group and a name.
func named(gs ...any) Batch {
	var rs plan.Records[rec]
	for i := 0; i < len(gs); i += 2 {
		rs = append(rs, rec{G: gs[i].(int), Name: gs[i+1].(string)})
	}
	return Batch{Records: rs}
}

// shape prints channels as "input p→c: [names] [names]" lines, one per channel.
func shape(chans []Channel) []string {
	var out []string
	for _, c := range chans {
		s := fmt.Sprintf("in%d %d→%d:", c.Input, c.Producer, c.Consumer)
		for k, b := range c.Batches {
			if b.Seq != uint64(k+1) {
				s += fmt.Sprintf(" seq%d!", b.Seq)
			}
			recs, _ := plan.RecordsOf[rec](b.Records)
			var names []string
			for _, r := range recs {
				names = append(names, r.Name)
			}
			s += fmt.Sprint(" ", names)
		}
		out = append(out, s)
	}
	return out
}

// expectShape redistributes in and compares the result with want (see shape).
func expectShape(t *testing.T, spec Spec, in []Channel, want []string) {
	t.Helper()
	out, err := Redistribute(spec, in)
	if err != nil {
		t.Fatal(err)
	}
	if got := shape(out); !slices.Equal(got, want) {
		t.Fatalf("redistributed\n%v\nwant\n%v", got, want)
	}
}

func TestRedistributeKeyedTwoToThree(t *testing.T) {
	old, _ := keygroups.Contiguous(8, 2) // 0-3 → 0, 4-7 → 1
	nt, _, err := old.Rescale(3)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int32{0, 0, 0, 2, 1, 1, 1, 2}; !slices.Equal(nt.Owners, want) {
		t.Fatalf("rescaled owners %v, want %v", nt.Owners, want)
	}
	spec := Spec{OldParallelism: 2, NewParallelism: 3, OldTable: old, NewTable: nt,
		Inputs: []Input{{Partitioner: plan.KeyGroupHash, OldProducers: 2, NewProducers: 2, Records: mustRecords(t, 8)}}}
	in := []Channel{
		{Input: 0, Producer: 1, Consumer: 0, Batches: []Batch{named(3, "x1")}},
		{Input: 0, Producer: 0, Consumer: 0, Batches: []Batch{named(0, "a", 3, "b"), named(3, "c", 1, "d")}},
		{Input: 0, Producer: 0, Consumer: 1, Batches: []Batch{named(7, "e", 4, "f")}},
		{Input: 0, Producer: 1, Consumer: 1}, // an empty channel
	}
	expectShape(t, spec, in, []string{
		"in0 0→0: [a] [d]",
		"in0 0→1: [f]",
		"in0 0→2: [b] [c] [e]",
		"in0 1→2: [x1]",
	})
}

// One consumer going from 3 to 2 instances with a hash input whose producer
// also goes from 3 to 2, a rebalance input and a broadcast input.
func TestRedistributeMixedInputsThreeToTwo(t *testing.T) {
	old := mustTable(t, 6, 0, 0, 1, 1, 2, 2)
	nt, _, err := old.Rescale(2)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int32{0, 0, 1, 1, 0, 1}; !slices.Equal(nt.Owners, want) {
		t.Fatalf("rescaled owners %v, want %v", nt.Owners, want)
	}
	spec := Spec{OldParallelism: 3, NewParallelism: 2, OldTable: old, NewTable: nt, Inputs: []Input{
		{Partitioner: plan.KeyGroupHash, OldProducers: 3, NewProducers: 2, Records: mustRecords(t, 6)},
		{Partitioner: plan.Rebalance, OldProducers: 1, NewProducers: 1},
		{Partitioner: plan.Broadcast, OldProducers: 2, NewProducers: 2},
	}}
	in := []Channel{
		{Input: 0, Producer: 0, Consumer: 2, Batches: []Batch{named(4, "a", 5, "b")}},
		{Input: 0, Producer: 2, Consumer: 0, Batches: []Batch{named(1, "c")}},
		{Input: 0, Producer: 2, Consumer: 2, Batches: []Batch{named(5, "d")}},
		{Input: 0, Producer: 1, Consumer: 1, Batches: []Batch{named(2, "e")}},
		{Input: 1, Producer: 0, Consumer: 0, Batches: []Batch{named(0, "f")}},
		{Input: 1, Producer: 0, Consumer: 1, Batches: []Batch{named(0, "g")}},
		{Input: 1, Producer: 0, Consumer: 2, Batches: []Batch{named(0, "h", 0, "i")}},
		{Input: 2, Producer: 0, Consumer: 0, Batches: []Batch{named(0, "j")}},
		{Input: 2, Producer: 0, Consumer: 1, Batches: []Batch{named(0, "k")}},
		{Input: 2, Producer: 0, Consumer: 2, Batches: []Batch{named(0, "l")}},
		{Input: 2, Producer: 1, Consumer: 2, Batches: []Batch{named(0, "m")}},
	}
	expectShape(t, spec, in, []string{
		"in0 0→0: [a] [c]", // old producers 0 and 2 fold into new producer 0
		"in1 0→0: [f] [h i]",
		"in2 0→0: [j]",
		"in0 0→1: [b] [d]",
		"in0 1→1: [e]",
		"in1 0→1: [g]",
		"in2 0→1: [k]", // old consumer 2's broadcast copies (l, m) are dropped
	})
}

// Scaling a broadcast consumer up hands each new instance a copy of the state
// of the old instance whose place it takes.
func TestRedistributeBroadcastScaleUpCopies(t *testing.T) {
	spec := Spec{OldParallelism: 2, NewParallelism: 5, Inputs: []Input{{Partitioner: plan.Broadcast, OldProducers: 1, NewProducers: 1}}}
	in := []Channel{
		{Input: 0, Producer: 0, Consumer: 0, Batches: []Batch{named(0, "a"), named(0, "b")}},
		{Input: 0, Producer: 0, Consumer: 1, Batches: []Batch{named(0, "b")}},
	}
	expectShape(t, spec, in, []string{"in0 0→0: [a] [b]", "in0 0→1: [b]", "in0 0→2: [a] [b]", "in0 0→3: [b]", "in0 0→4: [a] [b]"})
}

// Forward channels stay forward: old i → i mod p on both sides.
func TestRedistributeForwardThreeToTwo(t *testing.T) {
	spec := Spec{OldParallelism: 3, NewParallelism: 2, Inputs: []Input{{Partitioner: plan.Forward, OldProducers: 3, NewProducers: 2}}}
	in := []Channel{
		{Input: 0, Producer: 2, Consumer: 2, Batches: []Batch{named(0, "c")}},
		{Input: 0, Producer: 0, Consumer: 0, Batches: []Batch{named(0, "a")}},
		{Input: 0, Producer: 1, Consumer: 1, Batches: []Batch{named(0, "b")}},
	}
	expectShape(t, spec, in, []string{"in0 0→0: [a] [c]", "in0 1→1: [b]"})
}

func TestRedistributeNothingCaptured(t *testing.T) {
	old, _ := keygroups.Contiguous(8, 2)
	nt, _, _ := old.Rescale(4)
	spec := Spec{OldParallelism: 2, NewParallelism: 4, OldTable: old, NewTable: nt,
		Inputs: []Input{{Partitioner: plan.KeyGroupHash, OldProducers: 1, NewProducers: 1, Records: mustRecords(t, 8)}}}
	for _, in := range [][]Channel{nil, {{Input: 0, Producer: 0, Consumer: 1}}, {{Input: 0, Producer: 0, Consumer: 0, Batches: []Batch{{Seq: 1, Records: plan.Records[rec]{}}}}}} {
		out, err := Redistribute(spec, in)
		if err != nil || len(out) != 0 {
			t.Fatalf("Redistribute(%v) = %v, %v; want nothing", in, out, err)
		}
	}
}

func TestRedistributeRejects(t *testing.T) {
	old, _ := keygroups.Contiguous(8, 2)
	nt, _, _ := old.Rescale(3)
	other, _ := keygroups.Contiguous(16, 3)
	hash := func() Input {
		return Input{Partitioner: plan.KeyGroupHash, OldProducers: 2, NewProducers: 2, Records: mustRecords(t, 8)}
	}
	good := func() Spec {
		return Spec{OldParallelism: 2, NewParallelism: 3, OldTable: old, NewTable: nt, Inputs: []Input{hash()}}
	}
	ok := []Channel{{Input: 0, Producer: 0, Consumer: 0, Batches: []Batch{named(1, "a")}}}
	cases := []struct {
		name string
		spec func(*Spec)
		in   []Channel
	}{
		{"consumer parallelism 0", func(s *Spec) { s.NewParallelism = 0 }, ok},
		{"producers 0", func(s *Spec) { s.Inputs[0].NewProducers = 0 }, ok},
		{"hash without Records", func(s *Spec) { s.Inputs[0].Records = nil }, ok},
		{"no old table", func(s *Spec) { s.OldTable = nil }, ok},
		{"new table for another parallelism", func(s *Spec) { s.NewTable = old }, ok},
		{"tables of different max", func(s *Spec) { s.NewTable = other }, ok},
		{"unknown partitioner", func(s *Spec) { s.Inputs[0].Partitioner = plan.Partitioner(42) }, ok},
		{"forward with unequal parallelism", func(s *Spec) {
			s.Inputs = []Input{{Partitioner: plan.Forward, OldProducers: 2, NewProducers: 2}}
		}, ok},
		{"forward channel across instances", func(s *Spec) {
			s.Inputs = []Input{{Partitioner: plan.Forward, OldProducers: 2, NewProducers: 3}}
		}, []Channel{{Input: 0, Producer: 0, Consumer: 1, Batches: []Batch{named(0, "a")}}}},
		{"input out of range", nil, []Channel{{Input: 1, Producer: 0, Consumer: 0}}},
		{"producer out of range", nil, []Channel{{Input: 0, Producer: 2, Consumer: 0}}},
		{"consumer out of range", nil, []Channel{{Input: 0, Producer: 0, Consumer: -1}}},
		{"channel twice", nil, []Channel{ok[0], ok[0]}},
		{"record routed to the wrong old owner", nil, []Channel{{Input: 0, Producer: 1, Consumer: 1, Batches: []Batch{named(4, "a", 2, "b")}}}},
		{"key group out of range", nil, []Channel{{Input: 0, Producer: 0, Consumer: 0, Batches: []Batch{{Seq: 1,
			Records: plan.Grouped[rec]{Recs: []rec{{G: 1}}, Groups: []uint16{9}}}}}}},
		{"batch of another type", nil, []Channel{{Input: 0, Producer: 0, Consumer: 0, Batches: []Batch{{Seq: 1, Records: plan.Records[int]{1}}}}}},
	}
	for _, c := range cases {
		spec := good()
		if c.spec != nil {
			c.spec(&spec)
		}
		_, err := Redistribute(spec, c.in)
		if err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		if !errors.Is(err, ErrRedistribute) {
			t.Errorf("%s: error %v, want ErrRedistribute", c.name, err)
		}
		t.Logf("%s: %v", c.name, err)
	}
}

func TestRecordsUsesCarriedKeyGroups(t *testing.T) {
	r := mustRecords(t, 8)
	b := plan.Grouped[rec]{Recs: []rec{{G: 1}, {G: 2}, {G: 3}}, Groups: []uint16{5, 6, 7}}
	if g, err := r.Group(b, 1); err != nil || g != 6 {
		t.Fatalf("Group of a grouped batch = %d, %v; want the carried 6", g, err)
	}
	if g, err := r.Group(plan.Records[rec](b.Recs), 1); err != nil || g != 2 {
		t.Fatalf("Group of a plain batch = %d, %v; want the hashed 2", g, err)
	}
	part, err := r.Pick(b, []int{0, 2})
	if err != nil {
		t.Fatal(err)
	}
	if g, ok := part.(plan.Grouped[rec]); !ok || !slices.Equal(g.Groups, []uint16{5, 7}) || len(g.Recs) != 2 || g.Recs[1].G != 3 {
		t.Fatalf("Pick kept %#v", part)
	}
	if _, err := RecordsOf[rec](nil, 8); err == nil {
		t.Fatal("RecordsOf without a hash: no error")
	}
	if _, err := RecordsOf(recHash, 0); !errors.Is(err, keygroups.ErrInvalidParallelism) {
		t.Fatalf("RecordsOf with max 0: %v", err)
	}
}
