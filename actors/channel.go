package actors

import (
	"fmt"

	"github.com/asynkron/protoactor-go/actor"
)

// channel is the actor between one producer instance and one consumer instance.
// It holds at most capacity buffers (queued plus delivered-but-unprocessed); the
// producer only sends with credit, and every processed buffer returns one credit.
//
// Barriers: an unaligned barrier is delivered at once, ahead of the queue, with
// copies of every buffer before it the consumer may not have processed; an
// aligned barrier is delivered in order, after which the channel holds further
// data until the consumer unblocks it.
type channel struct {
	job      *Job
	name     string
	consumer *actor.PID
	producer *actor.PID
	input    int // index of this channel among the consumer's inputs
	output   int // the producer's output edge index
	outCh    int // this channel's index on that edge

	queue   []*Buffer // received, not yet delivered
	unacked []*Buffer // delivered, not yet processed by the consumer

	lastReceived  uint64
	lastDelivered uint64
	eosSeq        uint64
	eosReceived   bool
	eosSent       bool

	barriers   []*barrierMsg // aligned barriers waiting for their data to be delivered
	blocked    bool          // an aligned barrier was delivered; wait for unblock
	switchedTo uint64        // barriers up to this id go overtaking
	owed       int           // credit to return once the producer is known
	gauges     *channelGauges
	fallback   fallbackBarriers // barriers sent back to in-order delivery (--max-inflight-bytes)
}

func newChannel(job *Job, name string, consumer *actor.PID, input int) *channel {
	g := job.live.channel(name)
	g.hasQueued.Store(true)
	return &channel{job: job, name: name, consumer: consumer, input: input, gauges: g}
}

// Receive handles the channel's messages.
func (c *channel) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *channelWireMsg:
		c.producer, c.output, c.outCh = m.producer, m.output, m.channel
		if c.owed > 0 {
			// Data from a producer on another node can arrive before the
			// wiring does: return the credit its buffers took now.
			ctx.Send(c.producer, &creditMsg{n: c.owed, output: c.output, channel: c.outCh})
			c.owed = 0
		}
	case *dataMsg:
		c.onData(m.buf)
		if c.blocked {
			c.reportBlocked(ctx)
		}
		c.deliver(ctx)
	case *ackMsg:
		c.onAck(ctx, m.seq)
		c.deliver(ctx)
	case *eosMsg:
		c.eosReceived, c.eosSeq = true, m.lastSeq
		c.deliver(ctx)
	case *barrierMsg:
		switch {
		case (m.unaligned || m.id <= c.switchedTo) && c.fallback.holds(c, m.id):
			c.fallback.deferred = append(c.fallback.deferred, m)
		case m.unaligned || m.id <= c.switchedTo:
			if c.ordersBarriers() {
				c.onSwitch(ctx, m.id) // older held barriers first, overtaking too
			}
			c.overtake(ctx, m)
		default:
			c.barriers = append(c.barriers, m)
		}
		c.deliver(ctx)
	case *switchUnalignedMsg:
		c.onSwitch(ctx, m.id)
		c.deliver(ctx)
		c.releaseDeferred(ctx)
	case *alignBarrierMsg:
		c.onAlignBarrier(ctx, m)
	case *unblockMsg:
		c.blocked = false
		c.fallback.blockedBy = 0
		c.deliver(ctx)
		c.releaseDeferred(ctx)
	case *chaosPanicMsg:
		panic(fmt.Sprintf("chaos: injected panic in channel %s", c.name))
	case *dumpChannelMsg:
		c.dump(m)
	case *linkFailedMsg:
		panic(fmt.Errorf("channel %s: %s", c.name, m.reason))
	case *rescaleBarrierMsg:
		c.overtakeRescale(ctx, m)
	}
}

// occupancy is the number of buffers the channel is responsible for.
func (c *channel) occupancy() int { return len(c.queue) + len(c.unacked) }

func (c *channel) onData(b *Buffer) {
	if b.Seq != c.lastReceived+1 {
		panic(fmt.Errorf("channel %s: buffer seq %d after %d: lost or reordered buffer", c.name, b.Seq, c.lastReceived))
	}
	c.lastReceived = b.Seq
	c.queue = append(c.queue, b)
	occ := c.occupancy()
	c.gauges.queued.Store(int64(occ))
	if occ > c.job.opts.ChannelCapacity {
		panic(fmt.Errorf("channel %s: %d buffers exceed capacity %d: producer sent without credit", c.name, occ, c.job.opts.ChannelCapacity))
	}
	raise(&c.job.Metrics.MaxChannelOccupancy, int64(occ))
}

func (c *channel) onAck(ctx actor.Context, seq uint64) {
	n := 0
	for len(c.unacked) > 0 && c.unacked[0].Seq <= seq {
		c.unacked[0] = nil
		c.unacked = c.unacked[1:]
		n++
	}
	c.gauges.queued.Store(int64(c.occupancy()))
	switch {
	case n > 0 && c.producer != nil:
		ctx.Send(c.producer, &creditMsg{n: n, output: c.output, channel: c.outCh})
	case n > 0:
		c.owed += n
	}
}

// overtake delivers barrier m now, with copies of every buffer up to its
// lastSeq that the consumer has not acknowledged: delivered ones, queued ones,
// and the producer's pending ones not received yet.
func (c *channel) overtake(ctx actor.Context, m *barrierMsg) {
	over := c.overtakenUpTo(m.lastSeq, m.pending)
	ctx.Send(c.consumer, &barrierOvertakeMsg{input: c.input, id: m.id, lastSeq: m.lastSeq, overtaken: over})
}

// overtakenUpTo is every buffer up to lastSeq that the consumer has not
// acknowledged: delivered ones, queued ones, and those of the producer's
// pending ones not received yet.
func (c *channel) overtakenUpTo(lastSeq uint64, pending []*Buffer) []*Buffer {
	var over []*Buffer
	for _, b := range c.unacked {
		if b.Seq <= lastSeq {
			over = append(over, b)
		}
	}
	for _, b := range c.queue {
		if b.Seq <= lastSeq {
			over = append(over, b)
		}
	}
	for _, b := range pending {
		if b.Seq > c.lastReceived && b.Seq <= lastSeq {
			over = append(over, b)
		}
	}
	return over
}

// onSwitch turns barrier id unaligned: a queued one is delivered at once, a
// later one will be.
func (c *channel) onSwitch(ctx actor.Context, id uint64) {
	if id > c.switchedTo {
		c.switchedTo = id
	}
	kept := c.barriers[:0]
	for _, b := range c.barriers {
		if b.id <= id {
			c.fallback.overtaken(b.id)
			c.overtake(ctx, b)
			continue
		}
		kept = append(kept, b)
	}
	c.barriers = kept
}

// releaseDeferred releases the deferred overtaking barriers that may go
// now, and delivers what waited behind them (the end of the stream too).
func (c *channel) releaseDeferred(ctx actor.Context) {
	if n := len(c.fallback.deferred); n > 0 {
		if c.fallback.release(ctx, c); len(c.fallback.deferred) < n {
			c.deliver(ctx)
		}
	}
}

// deliver hands queued buffers to the consumer while its window has room, and
// aligned barriers once everything before them is delivered. A buffer after
// a deferred overtaking barrier waits until the barrier is released: the
// consumer must not process data the barrier would then overtake.
func (c *channel) deliver(ctx actor.Context) {
	for !c.blocked {
		if len(c.barriers) > 0 && c.lastDelivered >= c.barriers[0].lastSeq {
			b := c.barriers[0]
			c.barriers = c.barriers[1:]
			c.blocked = true
			c.fallback.delivered(b.id)
			ctx.Send(c.consumer, &barrierInOrderMsg{input: c.input, id: b.id, lastSeq: b.lastSeq, final: b.final})
			c.reportBlocked(ctx)
			return
		}
		if len(c.queue) == 0 || len(c.unacked) >= c.job.opts.DeliveryWindow {
			break
		}
		if !c.fallback.passes(ctx, c, c.queue[0].Seq) {
			break
		}
		b := c.queue[0]
		c.queue[0] = nil
		c.queue = c.queue[1:]
		c.unacked = append(c.unacked, b)
		c.lastDelivered = b.Seq
		ctx.Send(c.consumer, &deliverMsg{input: c.input, buf: b})
	}
	if c.eosReceived && !c.eosSent && len(c.queue) == 0 && len(c.barriers) == 0 && len(c.fallback.deferred) == 0 && c.lastReceived == c.eosSeq {
		c.eosSent = true
		ctx.Send(c.consumer, &deliverEOSMsg{input: c.input})
	}
}
