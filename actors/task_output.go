package actors

import (
	"fmt"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/keygroups"
)

// outChannel is a producer's end of one channel.
type outChannel struct {
	pid     *actor.PID
	credit  int
	seq     uint64
	cur     []any     // records of the buffer being filled
	outbox  []*Buffer // sealed buffers waiting for credit
	eos     bool      // end of stream requested
	eosSent bool
}

// outEdge routes records of one output edge to its channels.
type outEdge struct {
	edge     *plan.Edge
	channels []*outChannel
	route    func(rec any) int // channel index; -1 means broadcast
}

// outputs is a task's output side. It implements plan.Collector.
type outputs struct {
	t       *task
	ctx     actor.Context
	edges   []*outEdge
	blocked int // channels whose outbox is not empty
}

// wire sets up the output channels: pids[edge][consumer instance].
func (o *outputs) wire(t *task, pids [][]*actor.PID) {
	o.t = t
	batch := t.job.opts.BatchSize
	for e, row := range pids {
		edge := t.op.Outputs[e]
		oe := &outEdge{edge: edge}
		for _, pid := range row {
			oe.channels = append(oe.channels, &outChannel{pid: pid, credit: t.job.opts.ChannelCapacity, cur: make([]any, 0, batch)})
		}
		oe.route = router(edge, t.instance, len(row), t.job.Plan.MaxParallelism)
		o.edges = append(o.edges, oe)
	}
}

// router returns the function that picks a channel for a record.
func router(edge *plan.Edge, instance, n, maxParallelism int) func(any) int {
	switch edge.Partitioner {
	case plan.Forward:
		return func(any) int { return instance }
	case plan.Rebalance:
		next := instance % n
		return func(any) int {
			c := next
			next++
			if next == n {
				next = 0
			}
			return c
		}
	case plan.Shuffle:
		// xorshift64*, seeded per producer so runs are repeatable.
		state := uint64(instance)*0x9E3779B97F4A7C15 + uint64(edge.ID) + 1
		return func(any) int {
			state ^= state >> 12
			state ^= state << 25
			state ^= state >> 27
			return int((state * 2685821657736338717) >> 33 % uint64(n))
		}
	case plan.Broadcast:
		return func(any) int { return -1 }
	case plan.KeyGroupHash:
		table, err := keygroups.Contiguous(maxParallelism, n)
		if err != nil {
			panic(fmt.Errorf("edge %s→%s: %w", edge.From.Name, edge.To.Name, err))
		}
		owners, hash, m := table.Owners, edge.KeyHash, uint32(maxParallelism)
		return func(rec any) int { return int(owners[hash(rec)%m]) }
	}
	panic(fmt.Errorf("edge %s→%s: unknown partitioner %v", edge.From.Name, edge.To.Name, edge.Partitioner))
}

// Collect routes one record (plan.Collector).
func (o *outputs) Collect(rec any) {
	for _, oe := range o.edges {
		c := oe.route(rec)
		if c >= 0 {
			o.append(oe.channels[c], rec)
			continue
		}
		for _, ch := range oe.channels {
			o.append(ch, rec)
		}
	}
}

func (o *outputs) append(ch *outChannel, rec any) {
	ch.cur = append(ch.cur, rec)
	if len(ch.cur) >= cap(ch.cur) {
		o.seal(ch)
	}
}

// seal closes the buffer being filled and sends it, or keeps it until credit comes.
func (o *outputs) seal(ch *outChannel) {
	if len(ch.cur) == 0 {
		return
	}
	ch.seq++
	b := &Buffer{Seq: ch.seq, Records: ch.cur}
	ch.cur = make([]any, 0, o.t.job.opts.BatchSize)
	if ch.credit > 0 && len(ch.outbox) == 0 {
		o.send(ch, b)
		return
	}
	if len(ch.outbox) == 0 {
		o.blocked++
	}
	ch.outbox = append(ch.outbox, b)
	raise(&o.t.job.Metrics.MaxOutbox, int64(len(ch.outbox)))
}

func (o *outputs) send(ch *outChannel, b *Buffer) {
	ch.credit--
	o.ctx.Send(ch.pid, &dataMsg{buf: b})
	o.t.job.Metrics.BuffersSent.Add(1)
}

// credit returns n slots of a channel and sends what was waiting for them.
func (o *outputs) credit(ctx actor.Context, edge, channel, n int) {
	o.ctx = ctx
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
		}
	}
	o.sendEOS(ch)
}

// flushAll seals every partially filled buffer (flush interval, end of input).
func (o *outputs) flushAll(ctx actor.Context) {
	o.ctx = ctx
	for _, oe := range o.edges {
		for _, ch := range oe.channels {
			o.seal(ch)
		}
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
func (o *outputs) barrier(ctx actor.Context, id uint64, unaligned bool) {
	o.ctx = ctx
	for _, oe := range o.edges {
		for _, ch := range oe.channels {
			o.seal(ch)
			var pending []*Buffer
			if len(ch.outbox) > 0 {
				pending = append(pending, ch.outbox...)
			}
			ctx.Send(ch.pid, &barrierMsg{id: id, lastSeq: ch.seq, unaligned: unaligned, pending: pending})
		}
	}
}
