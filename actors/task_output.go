package actors

import (
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/rescale/flow"
)

// outChannel is a producer's end of one channel.
type outChannel struct {
	pid     *actor.PID
	credit  int
	seq     uint64
	outbox  []*Buffer // sealed buffers waiting for credit
	gauges  *channelGauges
	eos     bool // end of stream requested
	eosSent bool
	open    flow.Open // the origin of the open batch
}

// outEdge is one output edge: its channels and the typed writer that fills
// their batches.
type outEdge struct {
	edge     *plan.Edge
	channels []*outChannel
	writer   plan.EdgeWriter
}

// outputs is a task's output side. It implements plan.Output.
type outputs struct {
	t       *task
	ctx     actor.Context
	edges   []*outEdge
	writers []plan.EdgeWriter
	blocked int // channels whose outbox is not empty
	// early are barriers forwarded before the outputs were wired: a task
	// restarted on another node can get a barrier before its wiring, which
	// travels another way. sendEarlyBarriers sends them once wired.
	early []earlyBarrier
}

// earlyBarrier is a barrier kept until the outputs are wired.
type earlyBarrier struct {
	id               uint64
	unaligned, final bool
}

// wire sets up the output channels, pids[edge][consumer instance], and a
// writer per edge.
func (o *outputs) wire(t *task, pids [][]*actor.PID) error {
	o.t = t
	o.edges, o.writers = nil, nil
	for e, row := range pids {
		edge := t.op.Outputs[e]
		oe := &outEdge{edge: edge}
		for c, pid := range row {
			oe.channels = append(oe.channels, newOutChannel(t, edge, c, pid))
		}
		w, err := edge.NewWriter(plan.WriterConfig{Edge: edge, Instance: t.instance, Channels: len(row),
			MaxParallelism: t.job.Plan.MaxParallelism, BatchSize: t.job.opts.BatchSize,
			Seal: func(c int, b plan.Batch) { o.seal(oe.channels[c], b) }})
		if err != nil {
			return fmt.Errorf("output %d: %w", e, err)
		}
		oe.writer = w
		o.edges = append(o.edges, oe)
		o.writers = append(o.writers, w)
	}
	return nil
}

// Writers returns the edges' writers (plan.Output).
func (o *outputs) Writers() []plan.EdgeWriter { return o.writers }

// seal numbers a full or flushed batch and sends it, or keeps it until credit
// comes.
func (o *outputs) seal(ch *outChannel, recs plan.Batch) {
	o.sealBuffer(ch, &Buffer{Records: recs, origin: ch.open.Sealed()})
}

// sealBuffer numbers b and sends it, or keeps it until credit comes.
func (o *outputs) sealBuffer(ch *outChannel, b *Buffer) {
	ch.seq++
	b.Seq = ch.seq
	if b.Records != nil {
		o.t.ctr.recordsOut.Add(int64(b.Records.Len()))
	}
	if ch.credit > 0 && len(ch.outbox) == 0 {
		o.send(ch, b)
		return
	}
	if len(ch.outbox) == 0 {
		o.blocked++
		if o.blocked == 1 {
			o.t.ctr.blocked(time.Now())
		}
	}
	ch.outbox = append(ch.outbox, b)
	raise(&o.t.job.Metrics.MaxOutbox, int64(len(ch.outbox)))
}

// flushEdge seals the partially filled batches of one edge.
func (o *outputs) flushEdge(oe *outEdge) {
	for c, ch := range oe.channels {
		if b := oe.writer.Take(c); b != nil {
			o.seal(ch, b)
		}
	}
}

// newOutChannel is t's channel on edge to consumer instance c, with a full
// credit and its gauges for /metrics.
func newOutChannel(t *task, edge *plan.Edge, c int, pid *actor.PID) *outChannel {
	g := t.job.live.channel(channelName(t.op.Name, t.instance, taskName(edge.To, c)))
	g.credits.Store(int64(t.job.opts.ChannelCapacity))
	g.hasCredits.Store(true)
	return &outChannel{pid: pid, credit: t.job.opts.ChannelCapacity, gauges: g}
}

func (o *outputs) send(ch *outChannel, b *Buffer) {
	ch.credit--
	ch.gauges.credits.Store(int64(ch.credit))
	o.ctx.Send(ch.pid, &dataMsg{buf: b})
	o.t.job.Metrics.BuffersSent.Add(1)
}

// credit returns n slots of a channel and sends what was waiting for them.
func (o *outputs) credit(ctx actor.Context, edge, channel, n int) {
	o.ctx = ctx
	if channel >= len(o.edges[edge].channels) {
		return // a channel to an instance a live rescale removed: it took all it was sent
	}
	ch := o.edges[edge].channels[channel]
	ch.credit += n
	if len(ch.outbox) > 0 {
		for ch.credit > 0 && len(ch.outbox) > 0 {
			o.send(ch, ch.outbox[0])
			ch.outbox[0] = nil
			ch.outbox = ch.outbox[1:]
		}
		if len(ch.outbox) == 0 {
			o.blocked--
			if o.blocked == 0 {
				o.t.ctr.unblocked(time.Now())
			}
		}
	}
	ch.gauges.credits.Store(int64(ch.credit))
	o.sendEOS(ch)
}

// flushAll seals every partially filled buffer (flush interval, end of input).
func (o *outputs) flushAll(ctx actor.Context) {
	o.ctx = ctx
	for _, oe := range o.edges {
		o.flushEdge(oe)
	}
}

// endAll flushes and ends every output channel (each as soon as its outbox is sent).
func (o *outputs) endAll(ctx actor.Context) {
	o.flushAll(ctx)
	for _, oe := range o.edges {
		for _, ch := range oe.channels {
			ch.eos = true
			o.sendEOS(ch)
		}
	}
}

func (o *outputs) sendEOS(ch *outChannel) {
	if ch.eos && !ch.eosSent && len(ch.outbox) == 0 {
		ch.eosSent = true
		o.ctx.Send(ch.pid, &eosMsg{lastSeq: ch.seq})
	}
}

// allEnded reports whether every output channel has been sent its end of stream.
func (o *outputs) allEnded() bool {
	for _, oe := range o.edges {
		for _, ch := range oe.channels {
			if !ch.eosSent {
				return false
			}
		}
	}
	return true
}

// barrier seals the data before checkpoint id's barrier and sends the barrier
// to every output channel at once (barriers need no credit). The sealed
// buffers still waiting for credit travel along as copies, so an unaligned
// channel can hand them over with the barrier.
func (o *outputs) barrier(ctx actor.Context, id uint64, unaligned, final bool) {
	if o.t == nil { // not wired: nothing was sent, so it goes first once wired
		o.early = append(o.early, earlyBarrier{id: id, unaligned: unaligned, final: final})
		return
	}
	o.ctx = ctx
	for _, oe := range o.edges {
		o.flushEdge(oe)
		for _, ch := range oe.channels {
			var pending []*Buffer
			if len(ch.outbox) > 0 {
				pending = append(pending, ch.outbox...)
			}
			ctx.Send(ch.pid, &barrierMsg{id: id, lastSeq: ch.seq, unaligned: unaligned, final: final, pending: pending})
		}
	}
}

// sendEarlyBarriers forwards, in order, the barriers that came before the
// wiring.
func (o *outputs) sendEarlyBarriers(ctx actor.Context) {
	early := o.early
	o.early = nil
	for _, b := range early {
		o.barrier(ctx, b.id, b.unaligned, b.final)
	}
}
