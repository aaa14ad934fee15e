package inflight

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/internal/testseed"
	"github.com/weirstream/weir/keygroups"
	"github.com/weirstream/weir/store"
)

func TestLabelRoundsAndBack(t *testing.T) {
	cases := []struct {
		name       string
		buffers    int
		rounds     []store.ChannelRound
		checkpoint uint64
		want       []uint64 // each buffer's round; nil: an error
	}{
		{name: "no rounds: one of the checkpoint", buffers: 3, checkpoint: 9, want: []uint64{9, 9, 9}},
		{name: "a carried rest, then newer state", buffers: 4, checkpoint: 9,
			rounds: []store.ChannelRound{{Checkpoint: 7, Buffers: 3}, {Checkpoint: 9, Buffers: 1}}, want: []uint64{7, 7, 7, 9}},
		{name: "only a carried rest", buffers: 2, checkpoint: 9,
			rounds: []store.ChannelRound{{Checkpoint: 4, Buffers: 1}, {Checkpoint: 7, Buffers: 1}}, want: []uint64{4, 7}},
		{name: "rounds short of the buffers", buffers: 3, checkpoint: 9, rounds: []store.ChannelRound{{Checkpoint: 7, Buffers: 2}}},
		{name: "rounds beyond the buffers", buffers: 1, checkpoint: 9, rounds: []store.ChannelRound{{Checkpoint: 7, Buffers: 2}}},
		{name: "an empty round", buffers: 1, checkpoint: 9, rounds: []store.ChannelRound{{Checkpoint: 7, Buffers: 0}, {Checkpoint: 9, Buffers: 1}}},
		{name: "a round newer than its checkpoint", buffers: 1, checkpoint: 9, rounds: []store.ChannelRound{{Checkpoint: 10, Buffers: 1}}},
		{name: "a round of checkpoint 0", buffers: 1, checkpoint: 9, rounds: []store.ChannelRound{{Checkpoint: 0, Buffers: 1}}},
		{name: "checkpoint 0", buffers: 1, checkpoint: 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			batches := make([]Batch, tc.buffers)
			err := LabelRounds(batches, tc.rounds, tc.checkpoint)
			if tc.want == nil {
				if !errors.Is(err, ErrCorrupt) {
					t.Fatalf("LabelRounds = %v, want ErrCorrupt", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := make([]uint64, len(batches))
			for i, b := range batches {
				got[i] = b.Round
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("rounds %v, want %v", got, tc.want)
			}
			if back := RoundsOf(batches, tc.checkpoint); !slices.Equal(back, tc.rounds) {
				t.Fatalf("RoundsOf = %v, want %v", back, tc.rounds)
			}
		})
	}
}

// New input (Round 0) is labelled with the checkpoint it is captured into.
func TestRoundsOfLabelsNewInputWithItsCheckpoint(t *testing.T) {
	batches := []Batch{{Round: 7}, {Round: 7}, {}, {}}
	want := []store.ChannelRound{{Checkpoint: 7, Buffers: 2}, {Checkpoint: 12, Buffers: 2}}
	if got := RoundsOf(batches, 12); !slices.Equal(got, want) {
		t.Fatalf("RoundsOf = %v, want %v", got, want)
	}
	if got := RoundsOf([]Batch{{}, {}}, 12); got != nil {
		t.Fatalf("RoundsOf of new input only = %v, want nil (one round of the checkpoint)", got)
	}
}

// roundShape prints channels as shape does, each record as name@round.
func roundShape(chans []Channel) []string {
	var out []string
	for _, c := range chans {
		s := fmt.Sprintf("in%d %d→%d:", c.Input, c.Producer, c.Consumer)
		for _, b := range c.Batches {
			recs, _ := plan.RecordsOf[rec](b.Records)
			var names []string
			for _, r := range recs {
				names = append(names, fmt.Sprintf("%s@%d", r.Name, b.Round))
			}
			s += fmt.Sprint(" ", names)
		}
		out = append(out, s)
	}
	return out
}

// inRound labels a batch with a replay round.
func inRound(round uint64, b Batch) Batch {
	b.Round = round
	return b
}

// Redistribution keeps each batch's round (a split batch's parts too) and
// puts every new channel's older rounds first, each round in the order
// Redistribute gives without rounds. Mixed keyed and non-keyed inputs,
// scaling down (channels merge) and up (hash batches split).
func TestRedistributeOrdersEachChannelByRound(t *testing.T) {
	old, _ := keygroups.Contiguous(8, 2) // 0-3 → 0, 4-7 → 1
	down, _, err := old.Rescale(1)
	if err != nil {
		t.Fatal(err)
	}
	mixed := func(newP int, nt *keygroups.Table) Spec {
		return Spec{OldParallelism: 2, NewParallelism: newP, OldTable: old, NewTable: nt, Inputs: []Input{
			{Partitioner: plan.KeyGroupHash, OldProducers: 2, NewProducers: 1, Records: mustRecords(t, 8)},
			{Partitioner: plan.Rebalance, OldProducers: 1, NewProducers: 1},
			{Partitioner: plan.Broadcast, OldProducers: 1, NewProducers: 1},
		}}
	}
	in := []Channel{
		// Old consumer 0 had replayed round 7 before checkpoint 9.
		{Input: 0, Producer: 0, Consumer: 0, Batches: []Batch{inRound(9, named(1, "a", 2, "b"))}},
		// Old consumer 1 had not: round 7's rest, then 9's newer state.
		{Input: 0, Producer: 1, Consumer: 1, Batches: []Batch{inRound(7, named(5, "c", 6, "d")), inRound(9, named(5, "e"))}},
		{Input: 1, Producer: 0, Consumer: 0, Batches: []Batch{inRound(9, named(0, "f"))}},
		{Input: 1, Producer: 0, Consumer: 1, Batches: []Batch{inRound(7, named(0, "g")), inRound(9, named(0, "h"))}},
		{Input: 2, Producer: 0, Consumer: 0, Batches: []Batch{inRound(9, named(0, "i"))}},
		{Input: 2, Producer: 0, Consumer: 1, Batches: []Batch{inRound(7, named(0, "j")), inRound(9, named(0, "k"))}},
	}
	out, err := Redistribute(mixed(1, down), in)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"in0 0→0: [c@7 d@7] [a@9 b@9] [e@9]", // both old producers fold into new producer 0
		"in1 0→0: [g@7] [f@9] [h@9]",
		"in2 0→0: [i@9]", // broadcast: new 0 takes old 0's place
	}
	if got := roundShape(out); !slices.Equal(got, want) {
		t.Fatalf("scaled down to 1:\n%v\nwant\n%v", got, want)
	}

	up, _, err := old.Rescale(3)
	if err != nil {
		t.Fatal(err)
	}
	out, err = Redistribute(mixed(3, up), in)
	if err != nil {
		t.Fatal(err)
	}
	// up's owners: 0-2 → 0, 3 → 2, 4-6 → 1, 7 → 2.
	want = []string{
		"in0 0→0: [a@9 b@9]",
		"in1 0→0: [f@9]",
		"in2 0→0: [i@9]",
		"in0 0→1: [c@7 d@7] [e@9]",
		"in1 0→1: [g@7] [h@9]",
		"in2 0→1: [j@7] [k@9]",
		"in2 0→2: [i@9]",
	}
	if got := roundShape(out); !slices.Equal(got, want) {
		t.Fatalf("scaled up to 3:\n%v\nwant\n%v", got, want)
	}
}

// roundOf is each record's round in channels, by (input, producer, number,
// the consumer that captured it): a broadcast record was captured by each.
func roundOf(chans []Channel) map[[4]int]uint64 {
	m := map[[4]int]uint64{}
	for _, c := range chans {
		for _, b := range c.Batches {
			recs, _ := plan.RecordsOf[rec](b.Records)
			for _, r := range recs {
				m[[4]int{c.Input, r.Src, r.N, r.Dst}] = b.Round
			}
		}
	}
	return m
}

// Random captures whose channels each hold up to three rounds, in order (a
// checkpoint taken during the replay of one or two earlier restores), on
// every partitioner and scale case: the redistribution keeps what it kept
// without rounds (redistributionError), every record keeps its round, and
// every new channel's rounds never go down.
func TestRedistributeKeepsRoundsProperties(t *testing.T) {
	parts := []plan.Partitioner{plan.KeyGroupHash, plan.Forward, plan.Rebalance, plan.Broadcast}
	testseed.Run(t, 40, 10, func(seed uint64) {
		rng := rand.New(rand.NewPCG(seed, 3))
		for _, max := range []int{8, 128} {
			for _, sc := range scaleCases {
				spec := randomSpec(t, rng, max, sc[0], sc[1], parts...)
				in := randomCapture(t, rng, spec)
				for _, c := range in {
					round := uint64(3 + rng.IntN(3))
					for i := range c.Batches {
						if rng.IntN(4) == 0 {
							round += uint64(1 + rng.IntN(2))
						}
						c.Batches[i].Round = round
					}
				}
				want := roundOf(in)
				out, err := Redistribute(spec, in)
				if err == nil {
					err = redistributionError(spec, in, out)
				}
				if err != nil {
					t.Fatalf("seed %d: max %d %d→%d: %v", seed, max, sc[0], sc[1], err)
				}
				for _, c := range out {
					for i, b := range c.Batches {
						if i > 0 && b.Round < c.Batches[i-1].Round {
							t.Fatalf("seed %d: max %d %d→%d: channel in%d %d→%d: round %d after %d",
								seed, max, sc[0], sc[1], c.Input, c.Producer, c.Consumer, b.Round, c.Batches[i-1].Round)
						}
					}
				}
				for k, r := range roundOf(out) {
					if want[k] != r {
						t.Fatalf("seed %d: max %d %d→%d: record %v in round %d, captured in %d", seed, max, sc[0], sc[1], k, r, want[k])
					}
				}
			}
		}
	})
}
