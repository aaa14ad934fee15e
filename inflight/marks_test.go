package inflight

import (
	"fmt"
	"slices"
	"testing"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/keygroups"
)

// TestChannelStateKeepsMarks: the watermark (or idleness) that followed a
// captured buffer's records survives encoding, so a restore replays it
// where it travelled (before, channel state dropped it and a replayed
// record could be judged late differently from the undisturbed run).
func TestChannelStateKeepsMarks(t *testing.T) {
	in := []Batch{{Seq: 1, Records: ints(1, 2), MarkKind: 1, MarkAt: 1_000}, {Seq: 2, Records: ints(3)},
		{Seq: 3, Records: ints(4), MarkKind: 2}}
	data, _, err := Encode(intCodec{}, in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := Decode(intCodec{}, data)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(out) != fmt.Sprint(in) {
		t.Fatalf("decoded %v, want %v", out, in)
	}
}

// TestChannelStateOfFormatOneDecodesWithoutMarks: channel state stored
// before marks were kept still restores.
func TestChannelStateOfFormatOneDecodesWithoutMarks(t *testing.T) {
	var wire []wireBatchV1
	for seq, v := range []int{7, 8} {
		data, err := intCodec{}.AppendBatch(nil, ints(v))
		if err != nil {
			t.Fatal(err)
		}
		wire = append(wire, wireBatchV1{Seq: uint64(seq + 1), Data: data})
	}
	body, err := msgpack.Marshal(wire)
	if err != nil {
		t.Fatal(err)
	}
	out, err := Decode(intCodec{}, append([]byte{formatNoMarksV1}, body...))
	if err != nil {
		t.Fatal(err)
	}
	want := []Batch{{Seq: 1, Records: ints(7)}, {Seq: 2, Records: ints(8)}}
	if fmt.Sprint(out) != fmt.Sprint(want) {
		t.Fatalf("decoded %v, want %v", out, want)
	}
}

// TestRedistributeKeepsMarks: a captured buffer split by key group over new
// instances carries its mark in every part, and one moved whole keeps it.
func TestRedistributeKeepsMarks(t *testing.T) {
	old, _ := keygroups.Contiguous(8, 2)
	nt, _, err := old.Rescale(3)
	if err != nil {
		t.Fatal(err)
	}
	spec := Spec{OldParallelism: 2, NewParallelism: 3, OldTable: old, NewTable: nt,
		Inputs: []Input{{Partitioner: plan.KeyGroupHash, OldProducers: 1, NewProducers: 1, Records: mustRecords(t, 8)}}}
	split := named(0, "a", 3, "b")
	split.MarkKind, split.MarkAt = 1, 500
	whole := named(1, "c")
	whole.MarkKind, whole.MarkAt = 1, 600
	out, err := Redistribute(spec, []Channel{{Input: 0, Producer: 0, Consumer: 0, Batches: []Batch{split, whole}}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range out {
		for _, b := range c.Batches {
			got = append(got, fmt.Sprintf("0→%d len %d mark %d@%d", c.Consumer, b.Records.Len(), b.MarkKind, b.MarkAt))
		}
	}
	want := []string{"0→0 len 1 mark 1@500", "0→0 len 1 mark 1@600", "0→2 len 1 mark 1@500"}
	if !slices.Equal(got, want) {
		t.Fatalf("redistributed %v, want %v", got, want)
	}
}

// TestRedistributeMergedChannelsKeepNoEarlyMark: two old consumers of one
// producer merge into one new consumer. The first old channel's watermark
// (600) came before records the producer sent earlier on the second (its
// mark 500 comes after them); replayed in place it would make them late. The
// merged channel carries no mark until its end, and then the highest one.
// With the producer rescaled too, it carries none.
func TestRedistributeMergedChannelsKeepNoEarlyMark(t *testing.T) {
	old, _ := keygroups.Contiguous(8, 2)
	nt, _, err := old.Rescale(1)
	if err != nil {
		t.Fatal(err)
	}
	for _, producers := range []int{1, 2} {
		spec := Spec{OldParallelism: 2, NewParallelism: 1, OldTable: old, NewTable: nt,
			Inputs: []Input{{Partitioner: plan.KeyGroupHash, OldProducers: 1, NewProducers: producers, Records: mustRecords(t, 8)}}}
		first := named(0, "a")
		first.MarkKind, first.MarkAt = WatermarkKind, 600
		second := named(4, "c")
		second.MarkKind, second.MarkAt = WatermarkKind, 500
		third := named(5, "d")
		out, err := Redistribute(spec, []Channel{
			{Input: 0, Producer: 0, Consumer: 0, Batches: []Batch{first}},
			{Input: 0, Producer: 0, Consumer: 1, Batches: []Batch{second, third}},
		})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, c := range out {
			for _, b := range c.Batches {
				got = append(got, fmt.Sprintf("len %d mark %d@%d", b.Records.Len(), b.MarkKind, b.MarkAt))
			}
		}
		want := []string{"len 1 mark 0@0", "len 1 mark 0@0", "len 1 mark 1@600"}
		if producers != 1 {
			want[2] = "len 1 mark 0@0"
		}
		if !slices.Equal(got, want) {
			t.Fatalf("producers 1→%d: redistributed %v, want %v", producers, got, want)
		}
		if first.MarkAt != 600 || second.MarkAt != 500 {
			t.Fatalf("the captured batches changed: %+v %+v", first, second)
		}
	}
}
