package actors

import (
	"fmt"

	"github.com/asynkron/protoactor-go/actor"
)

// channel is the actor between one producer instance and one consumer instance.
// It holds at most capacity buffers (queued plus delivered-but-unprocessed); the
// producer only sends with credit, and every processed buffer returns one credit.
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

	lastReceived uint64
	eosSeq       uint64
	eosReceived  bool
	eosSent      bool
}

func newChannel(job *Job, name string, consumer *actor.PID, input int) *channel {
	return &channel{job: job, name: name, consumer: consumer, input: input}
}

// Receive handles the channel's messages.
func (c *channel) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *channelWireMsg:
		c.producer, c.output, c.outCh = m.producer, m.output, m.channel
	case *dataMsg:
		c.onData(m.buf)
		c.deliver(ctx)
	case *ackMsg:
		c.onAck(ctx, m.seq)
		c.deliver(ctx)
	case *eosMsg:
		c.eosReceived, c.eosSeq = true, m.lastSeq
		c.deliver(ctx)
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
	if n > 0 && c.producer != nil {
		ctx.Send(c.producer, &creditMsg{n: n, output: c.output, channel: c.outCh})
	}
}

// deliver hands queued buffers to the consumer while its window has room.
func (c *channel) deliver(ctx actor.Context) {
	for len(c.queue) > 0 && len(c.unacked) < c.job.opts.DeliveryWindow {
		b := c.queue[0]
		c.queue[0] = nil
		c.queue = c.queue[1:]
		c.unacked = append(c.unacked, b)
		ctx.Send(c.consumer, &deliverMsg{input: c.input, buf: b})
	}
	if c.eosReceived && !c.eosSent && len(c.queue) == 0 && c.lastReceived == c.eosSeq {
		c.eosSent = true
		ctx.Send(c.consumer, &deliverEOSMsg{input: c.input})
	}
}
