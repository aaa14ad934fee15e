package actors

import (
	"fmt"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/weirstream/weir/internal/plan"
)

// rescaleSwitch is a producer's switch point: every partial batch is sealed,
// the rescale barrier goes on every channel it has (after what was sent on
// it, with copies of what still waits for credit), and from then on each
// output edge routes by next's edge (the new tables and partitioners) over
// pids, the channels of the consumer instances after the rescale. Channels
// to removed consumers stay, unused by the writers, until what waits in
// them for credit is sent.
func (o *outputs) rescaleSwitch(ctx actor.Context, next *plan.Operator, pids [][]*actor.PID) error {
	if o.t == nil {
		return fmt.Errorf("rescale switch before the outputs were wired")
	}
	if len(pids) != len(o.edges) || len(next.Outputs) != len(o.edges) {
		return fmt.Errorf("rescale switch: %d output edges, %d channel lists, next plan has %d", len(o.edges), len(pids), len(next.Outputs))
	}
	o.ctx = ctx
	for _, oe := range o.edges {
		if err := dropRetired(oe); err != nil {
			return err
		}
	}
	for _, oe := range o.edges {
		o.flushEdge(oe)
		for _, ch := range oe.channels {
			pending := append([]*Buffer(nil), ch.outbox...)
			ctx.Send(ch.pid, &rescaleBarrierMsg{lastSeq: ch.seq, pending: pending})
		}
	}
	t := o.t
	for e, oe := range o.edges {
		old := map[string]*outChannel{}
		for _, ch := range oe.channels {
			old[ch.pid.Id] = ch
		}
		// A producer whose outputs end already ends the new channels too.
		ending := len(oe.channels) > 0 && oe.channels[0].eos
		var chans, added []*outChannel
		for c, pid := range pids[e] {
			ch, ok := old[pid.Id]
			if !ok {
				ch = newOutChannel(t, oe.edge, c, pid)
				ch.eos = ending
				added = append(added, ch)
			}
			delete(old, pid.Id)
			chans = append(chans, ch)
		}
		for _, ch := range oe.channels {
			if _, gone := old[ch.pid.Id]; gone {
				chans = append(chans, ch) // a removed consumer's: drains, then ends
			}
		}
		edge, n := next.Outputs[e], len(pids[e])
		w, err := edge.NewWriter(plan.WriterConfig{Edge: edge, Instance: t.instance, Channels: n,
			MaxParallelism: t.job.Plan.MaxParallelism, BatchSize: t.job.opts.BatchSize,
			Seal: func(c int, b plan.Batch) { o.seal(oe.channels[c], b) }})
		if err != nil {
			return fmt.Errorf("rescale switch, output %d: %w", e, err)
		}
		oe.edge, oe.channels, oe.writer = edge, chans, firstChannels{EdgeWriter: w, n: n}
		o.writers[e] = w
		for _, ch := range added {
			o.sendEOS(ch)
		}
	}
	return nil
}

// dropRetired forgets the channels an earlier rescale left to removed
// consumers: they finished only after taking everything sent to them.
func dropRetired(oe *outEdge) error {
	fc, ok := oe.writer.(firstChannels)
	if !ok {
		return nil
	}
	for _, ch := range oe.channels[fc.n:] {
		if len(ch.outbox) > 0 {
			return fmt.Errorf("rescale switch: %d buffers still wait for credit on a channel to a removed consumer", len(ch.outbox))
		}
	}
	oe.channels = oe.channels[:fc.n]
	oe.writer = fc.EdgeWriter
	return nil
}

// firstChannels is an edge's writer for the first n of its channels: the
// others lead to removed consumers, which the writer knows nothing of.
type firstChannels struct {
	plan.EdgeWriter
	n int
}

// Take is the writer's Take for its channels, nil for the others.
func (f firstChannels) Take(c int) plan.Batch {
	if c >= f.n {
		return nil
	}
	return f.EdgeWriter.Take(c)
}

// Pending is the writer's Pending for its channels, 0 for the others.
func (f firstChannels) Pending(c int) int {
	if c >= f.n {
		return 0
	}
	return pendingOf(f.EdgeWriter, c)
}
