package cluster

import (
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"
)

// DefaultHeartbeatEvery is the heartbeat period StartHeartbeats uses when
// given a period that is not positive.
const DefaultHeartbeatEvery = time.Second

// StartHeartbeats publishes build() on HeartbeatSubject of its Node at once
// and then every period, from one goroutine that stop ends; build is called
// on that goroutine. SentUnixNano is set to the time of sending. A failed
// publish is logged once, until publishing works again. stop is idempotent
// and returns after the goroutine has exited, so build is not called after
// stop returns.
func StartHeartbeats(nc *nats.Conn, every time.Duration, build func() Heartbeat, log zerolog.Logger) (stop func()) {
	return StartHeartbeatSender(nc, every, build, log).Stop
}

// HeartbeatSender publishes a node's heartbeats (see StartHeartbeatSender).
type HeartbeatSender struct {
	now    chan struct{} // a heartbeat is wanted before the next period
	done   chan struct{}
	exited chan struct{}
	once   sync.Once
}

// StartHeartbeatSender is StartHeartbeats with a sender whose Now asks for
// a heartbeat at once, between the periodic ones.
func StartHeartbeatSender(nc *nats.Conn, every time.Duration, build func() Heartbeat, log zerolog.Logger) *HeartbeatSender {
	if every <= 0 {
		every = DefaultHeartbeatEvery
	}
	s := &HeartbeatSender{now: make(chan struct{}, 1), done: make(chan struct{}), exited: make(chan struct{})}
	go func() {
		defer close(s.exited)
		t := time.NewTicker(every)
		defer t.Stop()
		failing := false
		for {
			err := publishHeartbeat(nc, build())
			switch {
			case err != nil && !failing:
				log.Warn().Err(err).Msg("heartbeat not sent")
			case err == nil && failing:
				log.Info().Msg("heartbeats sent again")
			}
			failing = err != nil
			select {
			case <-s.done:
				return
			case <-t.C:
			case <-s.now:
			}
		}
	}()
	return s
}

// Now asks for a heartbeat at once (a node joined and should hear this one
// without waiting a period). It never blocks: asks made before the sender
// got to them make one heartbeat.
func (s *HeartbeatSender) Now() {
	select {
	case s.now <- struct{}{}:
	default:
	}
}

// Stop ends the heartbeats and returns once the sender's goroutine has
// exited. Idempotent.
func (s *HeartbeatSender) Stop() {
	s.once.Do(func() { close(s.done) })
	<-s.exited
}

// publishHeartbeat stamps, encodes and publishes one heartbeat.
func publishHeartbeat(nc *nats.Conn, hb Heartbeat) error {
	hb.SentUnixNano = time.Now().UnixNano()
	if err := hb.check(); err != nil {
		return fmt.Errorf("heartbeat: %w", err)
	}
	b, err := EncodeHeartbeat(hb)
	if err != nil {
		return err
	}
	if err := nc.Publish(HeartbeatSubject(hb.Node), b); err != nil {
		return fmt.Errorf("publish heartbeat on %s: %w", HeartbeatSubject(hb.Node), err)
	}
	return nil
}

// WatchHeartbeats subscribes to every node's heartbeats and calls h with each
// valid one, on the subscription's goroutine, one at a time. Malformed
// heartbeats, and heartbeats whose node differs from their subject, go to bad
// (when not nil) and never reach h. Unsubscribe the returned subscription to
// stop.
func WatchHeartbeats(nc *nats.Conn, h func(Heartbeat), bad func(subject string, err error)) (*nats.Subscription, error) {
	report := func(subject string, err error) {
		if bad != nil {
			bad(subject, err)
		}
	}
	sub, err := nc.Subscribe(HeartbeatWildcard, func(m *nats.Msg) {
		node, ok := nodeOfSubject(m.Subject)
		if !ok {
			report(m.Subject, fmt.Errorf("not a heartbeat subject"))
			return
		}
		hb, err := DecodeHeartbeat(m.Data)
		if err != nil {
			report(m.Subject, err)
			return
		}
		if hb.Node != node {
			report(m.Subject, fmt.Errorf("heartbeat of node %q on the subject of node %q", hb.Node, node))
			return
		}
		h(hb)
	})
	if err != nil {
		return nil, fmt.Errorf("subscribe %s: %w", HeartbeatWildcard, err)
	}
	return sub, nil
}
