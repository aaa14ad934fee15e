package inflight

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/internal/testseed"
	"github.com/weirstream/weir/keygroups"
)

// scaleCases are the consumer parallelism changes every property is checked on.
var scaleCases = [][2]int{{2, 3}, {3, 2}, {4, 5}, {2, 1}, {1, 8}, {5, 5}, {7, 3}}

// randomSpec makes a spec for a consumer going from oldP to newP instances
// with one input per partitioner, producers of random parallelism (forward:
// the consumer's) and the consumer's old table either a first table or an
// arbitrary earlier rescale of one.
func randomSpec(t *testing.T, rng *rand.Rand, max, oldP, newP int, parts ...plan.Partitioner) Spec {
	t.Helper()
	old, err := keygroups.Contiguous(max, 1+rng.IntN(max))
	if err != nil {
		t.Fatal(err)
	}
	if old, _, err = old.Rescale(oldP); err != nil {
		t.Fatal(err)
	}
	nt, _, err := old.Rescale(newP)
	if err != nil {
		t.Fatal(err)
	}
	spec := Spec{OldParallelism: oldP, NewParallelism: newP, OldTable: old, NewTable: nt}
	for _, p := range parts {
		in := Input{Partitioner: p, OldProducers: 1 + rng.IntN(4), NewProducers: 1 + rng.IntN(4)}
		switch p {
		case plan.Forward:
			in.OldProducers, in.NewProducers = oldP, newP
		case plan.KeyGroupHash:
			in.Records = mustRecords(t, max)
		}
		spec.Inputs = append(spec.Inputs, in)
	}
	return spec
}

// randomCapture makes the channel state captured at the spec's old
// parallelism: each producer sends a numbered stream, routed by its input's
// partitioner (each broadcast consumer captured its own suffix of it), cut
// into batches of random size, some with key groups carried, some channels
// through Encode and Decode, some empty; in random order.
func randomCapture(t *testing.T, rng *rand.Rand, spec Spec) []Channel {
	t.Helper()
	max := spec.OldTable.MaxParallelism
	var out []Channel
	for k, in := range spec.Inputs {
		for j := 0; j < in.OldProducers; j++ {
			per := make([][]rec, spec.OldParallelism)
			n := rng.IntN(40)
			for seq := 1; seq <= n; seq++ {
				r := rec{Src: j, N: seq, G: rng.IntN(max)}
				switch in.Partitioner {
				case plan.KeyGroupHash:
					r.Dst = spec.OldTable.Owner(r.G)
				case plan.Forward:
					r.Dst = j
				case plan.Broadcast:
					continue // below
				default:
					r.Dst = rng.IntN(spec.OldParallelism)
				}
				per[r.Dst] = append(per[r.Dst], r)
			}
			if in.Partitioner == plan.Broadcast {
				for i := range per {
					from := rng.IntN(n + 1)
					for seq := from + 1; seq <= n; seq++ {
						per[i] = append(per[i], rec{Src: j, Dst: i, N: seq, G: rng.IntN(max)})
					}
				}
			}
			for i, recs := range per {
				if in.Partitioner == plan.Forward && i != j {
					continue
				}
				if len(recs) == 0 && rng.IntN(2) == 0 {
					continue
				}
				out = append(out, Channel{Input: k, Producer: j, Consumer: i, Batches: cut(t, rng, recs, in.Partitioner == plan.KeyGroupHash)})
			}
		}
	}
	rng.Shuffle(len(out), func(a, b int) { out[a], out[b] = out[b], out[a] })
	return out
}

// cut splits recs into batches of 1 to 6 records.
func cut(t *testing.T, rng *rand.Rand, recs []rec, hashed bool) []Batch {
	t.Helper()
	var bs []Batch
	for len(recs) > 0 {
		n := min(len(recs), 1+rng.IntN(6))
		part := slices.Clone(recs[:n])
		recs = recs[n:]
		b := Batch{Seq: uint64(len(bs) + 1), Records: plan.Records[rec](part)}
		if hashed && rng.IntN(2) == 0 {
			groups := make([]uint16, n)
			for i, r := range part {
				groups[i] = uint16(r.G)
			}
			b.Records = plan.Grouped[rec]{Recs: part, Groups: groups}
		}
		bs = append(bs, b)
	}
	if rng.IntN(3) == 0 { // as read back from a checkpoint
		data, _, err := Encode(plan.MsgpackCodec[rec]{}, bs)
		if err != nil {
			t.Fatal(err)
		}
		if bs, err = Decode(plan.MsgpackCodec[rec]{}, data); err != nil {
			t.Fatal(err)
		}
	}
	return bs
}

// recsOf returns a channel's records in replay order.
func recsOf(c Channel) []rec {
	var out []rec
	for _, b := range c.Batches {
		recs, _ := plan.RecordsOf[rec](b.Records)
		out = append(out, recs...)
	}
	return out
}

// recID names one captured record: input, producer, old consumer, number.
type recID struct{ input, src, dst, n int }

// redistributionError returns the first property of out = Redistribute(spec, in)
// that does not hold, or nil. The properties:
// channels exist at the new parallelism, sorted, numbered from 1, no empty
// batch; each record at the place its partitioner's rule gives; records in
// their original order per old producer and key group (hash) or per old
// channel (the others); no record lost or duplicated
// (broadcast: new consumer i' has exactly old consumer i' mod p's records).
func redistributionError(spec Spec, in, out []Channel) error {
	want := map[recID]int{}     // non-broadcast records captured
	wantBC := map[recID]int{}   // broadcast: (input, src, new consumer, n)
	producer := map[recID]int{} // the producer of the channel each record was captured on
	for _, c := range in {
		for _, r := range recsOf(c) {
			producer[recID{c.Input, r.Src, r.Dst, r.N}] = c.Producer
			if spec.Inputs[c.Input].Partitioner != plan.Broadcast {
				want[recID{c.Input, r.Src, r.Dst, r.N}]++
				continue
			}
			for to := r.Dst; to < spec.NewParallelism; to += spec.OldParallelism {
				wantBC[recID{c.Input, r.Src, to, r.N}]++
			}
		}
	}
	got, gotBC := map[recID]int{}, map[recID]int{}
	for k, c := range out {
		in := spec.Inputs[c.Input]
		if c.Producer < 0 || c.Producer >= in.NewProducers || c.Consumer < 0 || c.Consumer >= spec.NewParallelism {
			return fmt.Errorf("channel in%d %d→%d does not exist", c.Input, c.Producer, c.Consumer)
		}
		if k > 0 {
			p := out[k-1]
			if [3]int{p.Consumer, p.Input, p.Producer} == [3]int{c.Consumer, c.Input, c.Producer} ||
				slices.Compare([]int{p.Consumer, p.Input, p.Producer}, []int{c.Consumer, c.Input, c.Producer}) > 0 {
				return fmt.Errorf("channels not sorted: %v before %v", p, c)
			}
		}
		for i, b := range c.Batches {
			if b.Seq != uint64(i+1) || b.Records.Len() == 0 {
				return fmt.Errorf("channel in%d %d→%d batch %d: seq %d, %d records", c.Input, c.Producer, c.Consumer, i, b.Seq, b.Records.Len())
			}
		}
		// Order holds per old producer and key group on hash edges (a restored
		// channel may itself hold records of several earlier channels), per old
		// channel on the others.
		last := map[[2]int]int{}
		for _, r := range recsOf(c) {
			if p := producer[recID{c.Input, r.Src, r.Dst, r.N}]; c.Producer != p%in.NewProducers {
				return fmt.Errorf("record %+v of old producer %d on new producer %d's channel", r, p, c.Producer)
			}
			switch in.Partitioner {
			case plan.KeyGroupHash:
				if o := spec.NewTable.Owner(r.G); c.Consumer != o {
					return fmt.Errorf("record %+v of key group %d at consumer %d, its new owner is %d", r, r.G, c.Consumer, o)
				}
			case plan.Broadcast:
				if r.Dst != c.Consumer%spec.OldParallelism {
					return fmt.Errorf("broadcast record %+v of old consumer %d replayed by new consumer %d", r, r.Dst, c.Consumer)
				}
			default:
				if c.Consumer != r.Dst%spec.NewParallelism {
					return fmt.Errorf("%v record %+v of old consumer %d at new consumer %d", in.Partitioner, r, r.Dst, c.Consumer)
				}
			}
			stream := [2]int{r.Src, -1 - r.Dst}
			if in.Partitioner == plan.KeyGroupHash {
				stream = [2]int{r.Src, r.G}
			}
			if n, ok := last[stream]; ok && r.N <= n {
				return fmt.Errorf("channel in%d %d→%d: record %+v after record %d of its stream", c.Input, c.Producer, c.Consumer, r, n)
			}
			last[stream] = r.N
			if in.Partitioner == plan.Broadcast {
				gotBC[recID{c.Input, r.Src, c.Consumer, r.N}]++
			} else {
				got[recID{c.Input, r.Src, r.Dst, r.N}]++
			}
		}
	}
	if err := sameMultiset(got, want); err != nil {
		return err
	}
	if err := sameMultiset(gotBC, wantBC); err != nil {
		return fmt.Errorf("broadcast: %w", err)
	}
	return nil
}

// sameMultiset returns an error naming a record replayed a different number
// of times than captured.
func sameMultiset(got, want map[recID]int) error {
	for id, n := range want {
		if got[id] != n {
			return fmt.Errorf("record %+v: replayed %d times, captured %d times", id, got[id], n)
		}
	}
	for id, n := range got {
		if want[id] == 0 {
			return fmt.Errorf("record %+v: replayed %d times, never captured", id, n)
		}
	}
	return nil
}

// Every scale case with hash, forward, rebalance and broadcast inputs on one
// consumer, at a small and the default maxParallelism.
func TestRedistributeProperties(t *testing.T) {
	parts := []plan.Partitioner{plan.KeyGroupHash, plan.Forward, plan.Rebalance, plan.Shuffle, plan.Broadcast, plan.KeyGroupHash}
	testseed.Run(t, 40, 10, func(seed uint64) {
		rng := rand.New(rand.NewPCG(seed, 1))
		for _, max := range []int{8, 128} {
			for _, sc := range scaleCases {
				spec := randomSpec(t, rng, max, sc[0], sc[1], parts...)
				in := randomCapture(t, rng, spec)
				out, err := Redistribute(spec, in)
				if err != nil {
					t.Fatalf("seed %d: max %d %d→%d: %v", seed, max, sc[0], sc[1], err)
				}
				if err := redistributionError(spec, in, out); err != nil {
					t.Fatalf("seed %d: max %d %d→%d: %v", seed, max, sc[0], sc[1], err)
				}
			}
		}
	})
}

// byKeyGroup returns, per (consumer, input, old producer, key group), the
// numbers of the hash records each consumer replays, in replay order.
func byKeyGroup(out []Channel) map[[4]int][]int {
	m := map[[4]int][]int{}
	for _, c := range out {
		for _, r := range recsOf(c) {
			k := [4]int{c.Consumer, c.Input, r.Src, r.G}
			m[k] = append(m[k], r.N)
		}
	}
	return m
}

// Restore after restore: redistributing to a middle table and then to the
// final one gives every final consumer the same records, in the same order
// per old producer and key group, as redistributing once to the final table.
// (The channel a part arrives on may differ, j mod q1 mod q2 against j mod q2;
// the consumer replays all of its restored channels before new input.)
func TestRedistributeTwiceEqualsOnce(t *testing.T) {
	testseed.Run(t, 40, 10, func(seed uint64) {
		rng := rand.New(rand.NewPCG(seed, 2))
		for _, max := range []int{8, 128} {
			for _, sc := range scaleCases {
				first := randomSpec(t, rng, max, sc[0], 1+rng.IntN(min(max, 9)), plan.KeyGroupHash, plan.KeyGroupHash)
				final, _, err := first.NewTable.Rescale(sc[1])
				if err != nil {
					t.Fatal(err)
				}
				second := Spec{OldParallelism: first.NewParallelism, NewParallelism: sc[1], OldTable: first.NewTable, NewTable: final}
				once := Spec{OldParallelism: sc[0], NewParallelism: sc[1], OldTable: first.OldTable, NewTable: final}
				for _, in := range first.Inputs {
					q := 1 + rng.IntN(4)
					second.Inputs = append(second.Inputs, Input{Partitioner: plan.KeyGroupHash, OldProducers: in.NewProducers, NewProducers: q, Records: in.Records})
					once.Inputs = append(once.Inputs, Input{Partitioner: plan.KeyGroupHash, OldProducers: in.OldProducers, NewProducers: q, Records: in.Records})
				}
				in := randomCapture(t, rng, first)
				mid, err := Redistribute(first, in)
				if err != nil {
					t.Fatalf("seed %d: first restore: %v", seed, err)
				}
				twice, err := Redistribute(second, mid)
				if err != nil {
					t.Fatalf("seed %d: second restore: %v", seed, err)
				}
				direct, err := Redistribute(once, in)
				if err != nil {
					t.Fatalf("seed %d: direct restore: %v", seed, err)
				}
				for _, r := range []struct {
					spec    Spec
					in, out []Channel
				}{{second, mid, twice}, {once, in, direct}} {
					if err := redistributionError(r.spec, r.in, r.out); err != nil {
						t.Fatalf("seed %d: max %d %d→%d: %v", seed, max, r.spec.OldParallelism, r.spec.NewParallelism, err)
					}
				}
				a, b := byKeyGroup(twice), byKeyGroup(direct)
				if len(a) != len(b) {
					t.Fatalf("seed %d: max %d %d→%d→%d: %d (consumer, input, producer, group) streams twice, %d once",
						seed, max, sc[0], first.NewParallelism, sc[1], len(a), len(b))
				}
				for k, ns := range b {
					if !slices.Equal(a[k], ns) {
						t.Fatalf("seed %d: max %d %d→%d→%d: consumer %d input %d producer %d group %d replays %v twice, %v once",
							seed, max, sc[0], first.NewParallelism, sc[1], k[0], k[1], k[2], k[3], a[k], ns)
					}
				}
			}
		}
	})
}

// The property checker itself catches a wrong placement, a reordering, a
// lost and a duplicated record, so a passing property test means something.
func TestCheckRedistributionCatchesMistakes(t *testing.T) {
	old, _ := keygroups.Contiguous(8, 2)
	nt, _, _ := old.Rescale(3) // groups 0-2 stay at 0, group 3 goes to 2
	spec := Spec{OldParallelism: 2, NewParallelism: 3, OldTable: old, NewTable: nt,
		Inputs: []Input{{Partitioner: plan.KeyGroupHash, OldProducers: 1, NewProducers: 1, Records: mustRecords(t, 8)}}}
	var recs plan.Records[rec]
	for n := 1; n <= 8; n++ {
		recs = append(recs, rec{N: n, G: n % 4})
	}
	in := []Channel{{Input: 0, Producer: 0, Consumer: 0, Batches: []Batch{{Seq: 1, Records: recs}}}}
	good, err := Redistribute(spec, in)
	if err != nil {
		t.Fatal(err)
	}
	if err := redistributionError(spec, in, good); err != nil || len(good) != 2 {
		t.Fatalf("%d channels, %v", len(good), err)
	}
	mutations := map[string]func(c []Channel){
		"moved to another consumer": func(c []Channel) { c[0].Consumer = 1 },
		"reordered": func(c []Channel) {
			rs := recsOf(c[0])
			slices.Reverse(rs)
			c[0].Batches = []Batch{{Seq: 1, Records: plan.Records[rec](rs)}}
		},
		"lost": func(c []Channel) { c[1].Batches = []Batch{{Seq: 1, Records: plan.Records[rec](recsOf(c[1])[1:])}} },
		"duplicated": func(c []Channel) {
			c[0].Batches = append(slices.Clone(c[0].Batches), Batch{Seq: uint64(len(c[0].Batches) + 1), Records: c[0].Batches[0].Records})
		},
	}
	for name, mutate := range mutations {
		bad := slices.Clone(good)
		mutate(bad)
		if err := redistributionError(spec, in, bad); err == nil {
			t.Errorf("%s: the checker finds nothing wrong", name)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
}
