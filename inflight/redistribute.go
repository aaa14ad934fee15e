package inflight

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/keygroups"
)

// ErrRedistribute marks channel state or a description of it that cannot be
// redistributed: a channel that does not exist at the old parallelism, a
// record in a channel that its key-group table does not route there, tables
// that do not match the parallelism.
var ErrRedistribute = errors.New("cannot redistribute channel state")

// Channel is the captured state of one channel into the consumer operator:
// the buffers of input edge Input (an index into Spec.Inputs) from producer
// instance Producer to consumer instance Consumer, in channel order.
type Channel struct {
	Input    int
	Producer int
	Consumer int
	Batches  []Batch
}

// Input describes one input edge of the consumer operator.
type Input struct {
	Partitioner plan.Partitioner
	// OldProducers and NewProducers are the producer operator's parallelism
	// when the state was captured and after the restore.
	OldProducers, NewProducers int
	// Records finds key groups and cuts batches; hash edges need it, the
	// others move whole batches and ignore it.
	Records Records
}

// Spec describes a change of parallelism of one consumer operator.
type Spec struct {
	// OldParallelism and NewParallelism are the consumer's.
	OldParallelism, NewParallelism int
	// OldTable and NewTable are the consumer's key-group tables before and
	// after (the manifest's and the rescaled one); only hash inputs need them.
	OldTable, NewTable *keygroups.Table
	// Inputs are the consumer's input edges, in the operator's input order.
	Inputs []Input
}

// Redistribute returns the channel state each new consumer instance must
// replay, per (input, new producer, new consumer) channel, from the state
// captured at the old parallelism. Channels without state are left out; the
// result is sorted by consumer, input and producer, and each channel's
// batches are numbered from 1.
//
// Where records go, by the input's partitioner:
//
//   - hash: each record to the new owner of its key group, NewTable.Owner(g).
//     A record whose key group the old table does not give to its channel's
//     consumer is an error (a routing table mismatch).
//   - forward, rebalance, shuffle: the whole state of old consumer i to new
//     consumer i mod NewParallelism. These edges promise no key order, only
//     each producer's order on a channel, which whole batches keep; a consumer
//     that survives keeps its state.
//   - broadcast: every consumer sees every record, so new consumer i' replays
//     a copy of the state of old consumer i' mod OldParallelism (the one whose
//     place it takes, as Flink hands out broadcast state); the state of old
//     consumers beyond the new parallelism is dropped, each of its records
//     having been sent to the others too.
//
// Producers may change parallelism as well: the state of old producer j goes
// to the channel from new producer j mod NewProducers, so a producer that
// survives keeps its channels (and forward edges stay forward). On one new
// channel the parts follow one another by old producer, then old consumer,
// each in its original order, so every old producer's order per key group is
// kept; records of different producers never had an order between them.
//
// A new producer need not continue the stream of the old producer whose state
// its channel carries (sources are reassigned, upstream state moves), so the
// consumer must replay all of its restored channels before it takes new input
// from any channel. Then a key never sees a later record before an earlier one.
//
// Batches keep their Round (the checkpoint whose channel state they first
// became), and each new channel's batches are ordered by Round, stably: state
// carried over from an earlier restore (a checkpoint taken during its replay)
// comes before state captured later, and the consumer replays every channel's
// older round before any channel's newer one.
//
// Watermarks (a batch's mark) stay in place on a new channel that carries
// one old channel's state from a producer whose parallelism is unchanged.
// A new channel that joins several old channels keeps only the highest
// watermark, at its end, and one whose producers are rescaled keeps none: in
// place, one old channel's mark could precede records another old channel
// held from before it, making them late.
//
// Batches are moved, not copied, where a whole batch goes to one place, and a
// broadcast batch is shared by the consumers that replay it: the result's
// batches are read-only and must not be recycled into a pool.
func Redistribute(spec Spec, captured []Channel) ([]Channel, error) {
	if err := spec.validate(); err != nil {
		return nil, err
	}
	chans := slices.Clone(captured)
	slices.SortFunc(chans, func(a, b Channel) int {
		return cmp.Or(cmp.Compare(a.Input, b.Input), cmp.Compare(a.Producer, b.Producer), cmp.Compare(a.Consumer, b.Consumer))
	})
	for k, c := range chans {
		if err := spec.checkChannel(c); err != nil {
			return nil, err
		}
		if k > 0 && chans[k-1].Input == c.Input && chans[k-1].Producer == c.Producer && chans[k-1].Consumer == c.Consumer {
			return nil, fmt.Errorf("input %d channel %d→%d captured twice: %w", c.Input, c.Producer, c.Consumer, ErrRedistribute)
		}
	}
	out := newChannelSet()
	for _, c := range chans {
		in := spec.Inputs[c.Input]
		producer := c.Producer % in.NewProducers
		switch in.Partitioner {
		case plan.KeyGroupHash:
			if err := spec.splitByKeyGroup(out, c, producer); err != nil {
				return nil, fmt.Errorf("input %d channel %d→%d: %w", c.Input, c.Producer, c.Consumer, err)
			}
		case plan.Broadcast:
			for to := c.Consumer; to < spec.NewParallelism; to += spec.OldParallelism {
				out.add(c, c.Input, producer, to, c.Batches...)
			}
		default: // forward, rebalance, shuffle: checked by validate
			out.add(c, c.Input, producer, c.Consumer%spec.NewParallelism, c.Batches...)
		}
	}
	return out.sorted(spec), nil
}

// splitByKeyGroup sends each record of hash channel c to the new owner of its
// key group, on the channel from new producer producer.
func (s Spec) splitByKeyGroup(out *channelSet, c Channel, producer int) error {
	rec := s.Inputs[c.Input].Records
	max := s.OldTable.MaxParallelism
	idx := make([][]int, s.NewParallelism) // per new consumer: record indices of one batch
	for _, b := range c.Batches {
		for to := range idx {
			idx[to] = idx[to][:0]
		}
		for i := 0; i < b.Records.Len(); i++ {
			g, err := rec.Group(b.Records, i)
			if err != nil {
				return fmt.Errorf("buffer seq %d record %d: %w: %w", b.Seq, i, err, ErrRedistribute)
			}
			if g < 0 || g >= max {
				return fmt.Errorf("buffer seq %d record %d: key group %d outside [0, %d): %w", b.Seq, i, g, max, ErrRedistribute)
			}
			if o := s.OldTable.Owner(g); o != c.Consumer {
				return fmt.Errorf("buffer seq %d record %d: key group %d belongs to instance %d in the old table (epoch %d), routing table mismatch: %w",
					b.Seq, i, g, o, s.OldTable.Epoch, ErrRedistribute)
			}
			to := s.NewTable.Owner(g)
			idx[to] = append(idx[to], i)
		}
		for to, picked := range idx {
			switch {
			case len(picked) == 0:
			case len(picked) == b.Records.Len():
				out.add(c, c.Input, producer, to, b)
			default:
				part, err := rec.Pick(b.Records, picked)
				if err != nil {
					return fmt.Errorf("buffer seq %d: %w: %w", b.Seq, err, ErrRedistribute)
				}
				out.add(c, c.Input, producer, to, Batch{Records: part, MarkKind: b.MarkKind, MarkAt: b.MarkAt, Round: b.Round})
			}
		}
	}
	return nil
}
