package transport

import (
	"errors"
	"fmt"
	"sync"

	"github.com/nats-io/nats.go"
)

// Pending limits of every subscription made by Subscribe and Inspect.
// Weir messages are batches, so 64k pending messages is millions of
// records; the byte limit is 4× nats.go's default (64 MB) so that large
// batches do not trip it first. Beyond either limit nats.go drops messages
// and reports nats.ErrSlowConsumer (see SlowConsumerHandler).
const (
	PendingMsgsLimit  = 64 * 1024
	PendingBytesLimit = 256 << 20
)

// Publisher publishes envelopes on a connection and numbers them per link.
// Safe for concurrent use.
type Publisher struct {
	nc   *nats.Conn
	mu   sync.Mutex // held across stamp and publish: wire order = seq order
	seqs SeqStamper
}

// NewPublisher returns a Publisher on nc.
func NewPublisher(nc *nats.Conn) *Publisher {
	return &Publisher{nc: nc}
}

// Publish validates e and publishes it on subject. When e.Seq is 0 it is
// first stamped with the next sequence number of link LinkKey(e.From, e.To)
// for e.Gen (a new gen restarts the link at 1); e is modified. Stamp every
// message of a link here, or none. If the publish fails the number stays
// used, so the receiver sees a Gap if anything later gets through: a failed
// publish is never silent. An invalid envelope uses no number. An envelope
// larger than the server takes in one message goes as parts (HeaderPart),
// which Subscribe joins. Errors name the subject.
func (p *Publisher) Publish(subject string, e *Envelope) error {
	if e == nil {
		return fmt.Errorf("publish on %q: nil envelope", subject)
	}
	// A buffer's payload, the bulk of the traffic, is written by weir's own
	// encoder and is not walked again here; the receiver's FromMsg checks
	// every payload before it is decoded.
	if err := e.validateFields(e.Type != TypeBuffer); err != nil {
		return fmt.Errorf("publish on %q: %w", subject, err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if e.Seq == 0 {
		e.Seq = p.seqs.NextGen(LinkKey(e.From, e.To), e.Gen)
	}
	msgs, err := splitMsg(e.Msg(subject), p.nc.MaxPayload())
	if err != nil {
		return fmt.Errorf("publish %s seq %d on %q: %w", e.Type, e.Seq, subject, err)
	}
	for _, m := range msgs {
		if err := p.nc.PublishMsg(m); err != nil {
			return fmt.Errorf("publish %s seq %d on %q: %w", e.Type, e.Seq, subject, err)
		}
	}
	return nil
}

// Reset restarts the link from→to at seq 1 (see SeqChecker.Reset).
func (p *Publisher) Reset(from, to string) {
	p.seqs.Reset(LinkKey(from, to))
}

// Subscribe subscribes to subject and decodes each message with FromMsg:
// a good one goes to h, a bad one to bad with its subject (never to h, and
// never a panic). Both run on the subscription's nats.go goroutine, one
// message at a time in arrival order. The parts of an envelope sent in
// parts (HeaderPart) are joined first: h sees the envelope once. Pending limits are PendingMsgsLimit
// and PendingBytesLimit.
func Subscribe(nc *nats.Conn, subject string, h func(*Envelope), bad func(subject string, err error)) (*nats.Subscription, error) {
	return subscribe(nc, subject, FromMsg, h, bad)
}

// SubscribeUnwalked is Subscribe with FromMsgUnwalked: for a receiver that
// decodes buffer payloads only with bounds-checked decoders and treats a
// decode error as bad input.
func SubscribeUnwalked(nc *nats.Conn, subject string, h func(*Envelope), bad func(subject string, err error)) (*nats.Subscription, error) {
	return subscribe(nc, subject, FromMsgUnwalked, h, bad)
}

// subscribe is Subscribe with the given message check.
func subscribe(nc *nats.Conn, subject string, from func(*nats.Msg) (*Envelope, error), h func(*Envelope), bad func(subject string, err error)) (*nats.Subscription, error) {
	if nc == nil || h == nil || bad == nil {
		return nil, fmt.Errorf("subscribe %q: %w", subject, errors.New("nil connection or callback"))
	}
	var parts partJoiner // the callback runs for one message at a time
	sub, err := nc.Subscribe(subject, func(m *nats.Msg) {
		whole, err := parts.join(m)
		if err != nil {
			bad(m.Subject, err)
			return
		}
		if whole == nil {
			return // a part: the envelope is not whole yet
		}
		e, err := from(whole)
		if err != nil {
			bad(m.Subject, err)
			return
		}
		h(e)
	})
	if err != nil {
		return nil, fmt.Errorf("subscribe %q: %w", subject, err)
	}
	if err := sub.SetPendingLimits(PendingMsgsLimit, PendingBytesLimit); err != nil {
		_ = sub.Unsubscribe()
		return nil, fmt.Errorf("subscribe %q: pending limits: %w", subject, err)
	}
	return sub, nil
}
