package actors

import (
	"context"
	"fmt"

	"github.com/weirstream/weir/inflight"
	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/store"
)

// redistributionSpec describes, for inflight.Redistribute, how the channels
// into op changed from manifest m to plan p. An edge whose partitioner the
// graph chose from the parallelisms had the one those of m choose; a forward
// edge whose parallelisms changed moves whole batches as rebalance does.
func redistributionSpec(p *plan.Job, m *store.Manifest, op *plan.Operator) (inflight.Spec, error) {
	spec := inflight.Spec{OldParallelism: m.Parallelism[op.Name], NewParallelism: op.Parallelism, NewTable: op.Table}
	for _, e := range op.Inputs {
		in := inflight.Input{Partitioner: e.Partitioner, OldProducers: m.Parallelism[e.From.Name], NewProducers: e.From.Parallelism}
		if e.Implicit {
			in.Partitioner = plan.ImplicitPartitioner(in.OldProducers, spec.OldParallelism)
		}
		if in.Partitioner == plan.Forward && (in.OldProducers != in.NewProducers || spec.OldParallelism != spec.NewParallelism) {
			in.Partitioner = plan.Rebalance
		}
		if in.Partitioner == plan.KeyGroupHash {
			if e.Groups == nil {
				return inflight.Spec{}, fmt.Errorf("hash edge %s → %s cannot find its records' key groups", e.From.Name, e.To.Name)
			}
			rg, err := e.Groups(p.MaxParallelism)
			if err != nil {
				return inflight.Spec{}, fmt.Errorf("edge %s → %s: %w", e.From.Name, e.To.Name, err)
			}
			in.Records = rg
			if spec.OldTable == nil {
				old, err := storedTable(m, op.Name, spec.OldParallelism)
				if err != nil {
					return inflight.Spec{}, err
				}
				spec.OldTable = old
			}
		}
		spec.Inputs = append(spec.Inputs, in)
	}
	return spec, nil
}

// channelOf maps a task's input channel index to its edge and producer
// instance, given each input edge's producer parallelism: a task numbers its
// channels edge by edge, producer by producer.
func channelOf(input int, producers []int) (edge, producer int, ok bool) {
	for e, n := range producers {
		if input < n {
			return e, input, input >= 0
		}
		input -= n
	}
	return 0, 0, false
}

// inputOf is channelOf's inverse.
func inputOf(edge, producer int, producers []int) int {
	input := producer
	for _, n := range producers[:edge] {
		input += n
	}
	return input
}

// restoreRedistributed reads the channel state captured into every old
// instance of the task's operator, splits it to the new parallelism with
// inflight.Redistribute and queues this instance's part for replay. It
// returns the number of channels that got state and where the sections
// were read from.
func (t *task) restoreRedistributed(ctx context.Context, m *store.Manifest) (int, store.ReadStats, error) {
	var stats store.ReadStats
	spec, err := redistributionSpec(t.job.Plan, m, t.op)
	if err != nil {
		return 0, stats, err
	}
	oldProducers := make([]int, len(spec.Inputs))
	newProducers := make([]int, len(spec.Inputs))
	for i, in := range spec.Inputs {
		oldProducers[i], newProducers[i] = in.OldProducers, in.NewProducers
	}
	var captured []inflight.Channel
	for _, ts := range m.Tasks {
		if ts.Operator != t.op.Name || len(ts.Channels) == 0 {
			continue
		}
		for _, cb := range ts.Channels {
			e, j, ok := channelOf(cb.Input, oldProducers)
			if !ok {
				return 0, stats, fmt.Errorf("instance %d: channel state of input %d, which its %d inputs do not have", ts.Instance, cb.Input, sum(oldProducers))
			}
			captured = append(captured, inflight.Channel{Input: e, Producer: j, Consumer: ts.Instance})
		}
		chans, _, read, err := readChannelState(ctx, t.job.opts.Checkpoint.Store, m, t.op.Name, ts.Instance, ts.Channels, nil,
			func(cb store.ChannelBlob) plan.BatchCodec {
				e, _, _ := channelOf(cb.Input, oldProducers)
				return t.op.Inputs[e].Codec
			})
		stats.Add(read)
		if err != nil {
			return 0, stats, err
		}
		first := len(captured) - len(ts.Channels)
		for k := range ts.Channels {
			captured[first+k].Batches = chans[k]
		}
	}
	if len(captured) == 0 {
		return 0, stats, nil
	}
	chans, err := inflight.Redistribute(spec, captured)
	if err != nil {
		return 0, stats, err
	}
	n := 0
	for _, c := range chans {
		if c.Consumer != t.instance {
			continue
		}
		in := t.in.chans[inputOf(c.Input, c.Producer, newProducers)]
		for _, b := range c.Batches {
			// Shared with other consumers' replays: never recycled.
			in.replay = append(in.replay, replayBuffer(b, true))
		}
		n++
	}
	return n, stats, nil
}

func sum(xs []int) int {
	s := 0
	for _, x := range xs {
		s += x
	}
	return s
}
