package inflight

import (
	"cmp"
	"slices"
)

// channelKey names a new channel: input edge, producer, consumer.
type channelKey struct{ input, producer, consumer int }

// channelSet collects redistributed batches per new channel, in the order
// they are added, and which old channels (producer, consumer) they came from.
type channelSet struct {
	chans map[channelKey][]Batch
	from  map[channelKey]map[[2]int]bool
}

func newChannelSet() *channelSet {
	return &channelSet{chans: map[channelKey][]Batch{}, from: map[channelKey]map[[2]int]bool{}}
}

// add appends batches of old channel old to a new channel; empty batches are
// left out.
func (s *channelSet) add(old Channel, input, producer, consumer int, batches ...Batch) {
	k := channelKey{input, producer, consumer}
	for _, b := range batches {
		if b.Records != nil && b.Records.Len() > 0 {
			s.chans[k] = append(s.chans[k], b)
			if s.from[k] == nil {
				s.from[k] = map[[2]int]bool{}
			}
			s.from[k][[2]int{old.Producer, old.Consumer}] = true
		}
	}
}

// settleMarks keeps the marks of a new channel only where they still hold.
// A mark says the producer's watermark passed it on its old channel; on a
// new channel that joins the state of several old channels, one old
// channel's mark can come before another's records that the producer sent
// earlier, which would then be late. Such a channel keeps no mark in its
// batches, and its last batch carries the highest watermark of the state:
// once the whole channel is replayed, every record sent before it has been.
// A channel whose producers change parallelism keeps none: its new producer
// need not continue the stream of the old one whose state it carries.
func (s *channelSet) settleMarks(spec Spec, k channelKey, bs []Batch) {
	in := spec.Inputs[k.input]
	if len(s.from[k]) <= 1 && in.OldProducers == in.NewProducers {
		return
	}
	last, found := int64(0), false
	for i := range bs {
		if bs[i].MarkKind == WatermarkKind && (!found || bs[i].MarkAt > last) {
			last, found = bs[i].MarkAt, true
		}
		bs[i].MarkKind, bs[i].MarkAt = 0, 0 // bs holds copies: the records are shared, the marks are not
	}
	if found && in.OldProducers == in.NewProducers {
		bs[len(bs)-1].MarkKind, bs[len(bs)-1].MarkAt = WatermarkKind, last
	}
}

// sorted returns the channels by consumer, input and producer, each with its
// batches ordered by replay round (stably), its marks settled and its
// batches numbered from 1.
func (s *channelSet) sorted(spec Spec) []Channel {
	out := make([]Channel, 0, len(s.chans))
	for k, bs := range s.chans {
		slices.SortStableFunc(bs, func(a, b Batch) int { return cmp.Compare(a.Round, b.Round) })
		s.settleMarks(spec, k, bs)
		numbered := make([]Batch, len(bs))
		for i, b := range bs {
			b.Seq = uint64(i + 1)
			numbered[i] = b
		}
		out = append(out, Channel{Input: k.input, Producer: k.producer, Consumer: k.consumer, Batches: numbered})
	}
	slices.SortFunc(out, func(a, b Channel) int {
		return cmp.Or(cmp.Compare(a.Consumer, b.Consumer), cmp.Compare(a.Input, b.Input), cmp.Compare(a.Producer, b.Producer))
	})
	return out
}
