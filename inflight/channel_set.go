package inflight

import (
	"cmp"
	"slices"
)

// channelKey names a new channel: input edge, producer, consumer.
type channelKey struct{ input, producer, consumer int }

// channelSet collects redistributed batches per new channel, in the order
// they are added.
type channelSet struct {
	chans map[channelKey][]Batch
}

func newChannelSet() *channelSet {
	return &channelSet{chans: map[channelKey][]Batch{}}
}

// add appends batches to a channel; empty batches are left out.
func (s *channelSet) add(input, producer, consumer int, batches ...Batch) {
	k := channelKey{input, producer, consumer}
	for _, b := range batches {
		if b.Records != nil && b.Records.Len() > 0 {
			s.chans[k] = append(s.chans[k], b)
		}
	}
}

// sorted returns the channels by consumer, input and producer, each with its
// batches ordered by replay round (stably) and numbered from 1.
func (s *channelSet) sorted() []Channel {
	out := make([]Channel, 0, len(s.chans))
	for k, bs := range s.chans {
		slices.SortStableFunc(bs, func(a, b Batch) int { return cmp.Compare(a.Round, b.Round) })
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
