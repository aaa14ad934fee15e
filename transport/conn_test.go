package transport

import (
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/weirstream/weir/internal/natstest"
)

// recorder collects what Subscribe hands to its callbacks.
type recorder struct {
	mu   sync.Mutex
	good []*Envelope
	bad  []string // "subject: error"
	errs []error
}

func (r *recorder) onGood(e *Envelope) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.good = append(r.good, e)
}

func (r *recorder) onBad(subject string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.bad = append(r.bad, subject+": "+err.Error())
	r.errs = append(r.errs, err)
}

func (r *recorder) counts() (good, bad int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.good), len(r.bad)
}

func TestPublishSubscribeRoundTrip(t *testing.T) {
	s := natstest.Start(t, natstest.Options{})
	sub := s.Connect(t)
	pub := s.Connect(t)

	var rec recorder
	if _, err := Subscribe(sub, JobWildcard("keycount"), rec.onGood, rec.onBad); err != nil {
		t.Fatal(err)
	}
	raw, err := sub.SubscribeSync(DataSubject("keycount", 0, 0, 1))
	if err != nil {
		t.Fatal(err)
	}
	if err := sub.Flush(); err != nil { // the server has both subscriptions
		t.Fatal(err)
	}

	p := NewPublisher(pub)
	subj := DataSubject("keycount", 0, 0, 1)
	var sent []Envelope
	for i, gen := range []int{0, 0, 0, 1, 1} {
		e := &Envelope{Type: TypeBuffer, Job: "keycount", From: "n1/src-0", To: "n2/count-1", Gen: gen,
			Payload: mustPack(t, []any{i, "k"})}
		if i == 2 {
			e.Type, e.Checkpoint, e.Payload = TypeBarrier, 5, nil
		}
		if err := p.Publish(subj, e); err != nil {
			t.Fatal(err)
		}
		sent = append(sent, *e)
	}
	for i, want := range []uint64{1, 2, 3, 1, 2} {
		if sent[i].Seq != want {
			t.Errorf("message %d stamped seq %d, want %d", i, sent[i].Seq, want)
		}
	}
	waitFor(t, "5 envelopes", func() bool { g, _ := rec.counts(); return g == len(sent) })

	checker := NewSeqChecker()
	rec.mu.Lock()
	for i, got := range rec.good {
		if !reflect.DeepEqual(*got, sent[i]) {
			t.Errorf("envelope %d:\n got %+v\nwant %+v", i, *got, sent[i])
		}
		if v := checker.Check(LinkKey(got.From, got.To), got.Gen, got.Seq); v != InOrder {
			t.Errorf("envelope %d: %v", i, v)
		}
	}
	rec.mu.Unlock()

	// What `nats sub 'weir.>'` shows: the metadata as plain headers.
	m, err := raw.NextMsg(5 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{HeaderType: "buffer", HeaderJob: "keycount", HeaderFrom: "n1/src-0", HeaderTo: "n2/count-1",
		HeaderSeq: "1", HeaderCheckpoint: "0", HeaderGen: "0"}
	for k, v := range want {
		if got := m.Header.Get(k); got != v {
			t.Errorf("raw header %s = %q, want %q", k, got, v)
		}
	}
}

func TestSubscribeBadMessages(t *testing.T) {
	s := natstest.Start(t, natstest.Options{})
	sub := s.Connect(t)
	pub := s.Connect(t)

	var c Counters
	var rec recorder
	bad := func(subject string, err error) {
		c.CountBad(subject, err)
		rec.onBad(subject, err)
	}
	if _, err := Subscribe(sub, AllWildcard, rec.onGood, bad); err != nil {
		t.Fatal(err)
	}
	if err := sub.Flush(); err != nil {
		t.Fatal(err)
	}

	good := &Envelope{Type: TypeBuffer, Job: "j", From: "a", To: "b", Seq: 1, Payload: mustPack(t, []any{1, 2, 3})}
	withHeaders := func(subject string, mutate func(*nats.Msg)) *nats.Msg {
		m := good.Msg(subject)
		mutate(m)
		return m
	}
	msgs := []struct {
		msg  *nats.Msg
		want string
	}{
		{&nats.Msg{Subject: "weir.j.data.0.0.1", Data: []byte("garbage \x00\xff")}, "Weir-Type: missing"},
		{withHeaders("weir.j.data.0.0.2", func(m *nats.Msg) { m.Data = m.Data[:len(m.Data)-1] }), "msgpack truncated"},
		{withHeaders("weir.j.data.0.0.3", func(m *nats.Msg) { m.Data = []byte{0xdd, 0xff, 0xff, 0xff, 0xff} }), "declares 4294967295 values"},
		{withHeaders("weir.j.data.0.0.4", func(m *nats.Msg) { m.Header.Del(HeaderSeq) }), "Weir-Seq: missing"},
		{withHeaders("weir.j.credit.0.0.5", func(m *nats.Msg) { m.Header.Set(HeaderGen, "minus one") }), `Weir-Gen: "minus one"`},
		{withHeaders("weir.j.ctl.n1", func(m *nats.Msg) { m.Header.Set(HeaderType, "teleport") }), `"teleport" is not a known type`},
		{withHeaders("weir.other.ctl.n1", func(m *nats.Msg) {}), `does not match the subject's job "other"`},
	}
	for _, m := range msgs {
		if err := pub.PublishMsg(m.msg); err != nil {
			t.Fatal(err)
		}
	}
	// A good message after them: the subscription survives, and once it is
	// in, every bad one before it has been handled (one connection, in order).
	if err := NewPublisher(pub).Publish("weir.j.data.0.0.9", good); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the good message", func() bool { g, _ := rec.counts(); return g == 1 })

	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.bad) != len(msgs) {
		t.Fatalf("bad got %d messages, want %d:\n%s", len(rec.bad), len(msgs), strings.Join(rec.bad, "\n"))
	}
	for i, m := range msgs {
		got := rec.bad[i]
		if !strings.HasPrefix(got, m.msg.Subject+": ") || !strings.Contains(got, `"`+m.msg.Subject+`"`) || !strings.Contains(got, m.want) {
			t.Errorf("bad message %d: %q, want the subject %q and %q", i, got, m.msg.Subject, m.want)
		}
		if !errors.Is(rec.errs[i], ErrMalformed) {
			t.Errorf("bad message %d: %v does not wrap ErrMalformed", i, rec.errs[i])
		}
	}
	want := CounterValues{Malformed: 6, UnknownType: 1}
	if got := c.Snapshot(); got != want {
		t.Errorf("counters %+v, want %+v", got, want)
	}
}

func TestSlowConsumerHandler(t *testing.T) {
	s := natstest.Start(t, natstest.Options{})
	var c Counters
	slow := make(chan *nats.Subscription, 16)
	nc := s.Connect(t, nats.ErrorHandler(SlowConsumerHandler(&c, func(sub *nats.Subscription) { slow <- sub })))

	release := make(chan struct{})
	defer close(release) // before nc.Close at cleanup
	var rec recorder
	sub, err := Subscribe(nc, "weir.j.data.0.0.1", func(e *Envelope) {
		rec.onGood(e)
		<-release
	}, rec.onBad)
	if err != nil {
		t.Fatal(err)
	}
	if err := sub.SetPendingLimits(1, -1); err != nil { // tiny, to force a slow consumer
		t.Fatal(err)
	}
	p := NewPublisher(nc)
	for range 5 {
		if err := p.Publish("weir.j.data.0.0.1", &Envelope{Type: TypeEOS, Job: "j", From: "a", To: "b"}); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "a slow-consumer report", func() bool { return c.Snapshot().SlowConsumer >= 1 })
	select {
	case got := <-slow:
		if got != sub {
			t.Errorf("onSlow got subscription %v, want %v", got.Subject, sub.Subject)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("onSlow not called within 5s")
	}
	if got := c.Snapshot(); got.Malformed != 0 || got.UnknownType != 0 {
		t.Errorf("counters %+v", got)
	}
	// Other async errors are left alone.
	SlowConsumerHandler(&c, func(*nats.Subscription) { t.Error("onSlow for another error") })(nc, sub, nats.ErrPermissionViolation)
}

func TestPublishErrors(t *testing.T) {
	s := natstest.Start(t, natstest.Options{})
	nc := s.Connect(t)
	p := NewPublisher(nc)
	subj := DataSubject("j", 0, 0, 1)

	if err := p.Publish(subj, nil); err == nil || !strings.Contains(err.Error(), subj) {
		t.Errorf("nil envelope: %v", err)
	}
	bad := &Envelope{Type: "teleport", Job: "j", From: "a", To: "b"}
	if err := p.Publish(subj, bad); !errors.Is(err, ErrUnknownType) || !strings.Contains(err.Error(), subj) {
		t.Errorf("unknown type: %v", err)
	}
	bad = &Envelope{Type: TypeControl, Job: "j", From: "a", To: "b", Payload: []byte{0x92}}
	if err := p.Publish(subj, bad); !errors.Is(err, ErrMalformed) || bad.Seq != 0 {
		t.Errorf("truncated payload: %v, seq %d", err, bad.Seq)
	}
	e := &Envelope{Type: TypeEOS, Job: "j", From: "a", To: "b"}
	if err := p.Publish(subj, e); err != nil || e.Seq != 1 {
		t.Fatalf("after rejected envelopes: %v, seq %d (want 1: rejects use no number)", err, e.Seq)
	}
	p.Reset("a", "b")
	e = &Envelope{Type: TypeEOS, Job: "j", From: "a", To: "b"}
	if err := p.Publish(subj, e); err != nil || e.Seq != 1 {
		t.Fatalf("after Reset: %v, seq %d", err, e.Seq)
	}
	e = &Envelope{Type: TypeEOS, Job: "j", From: "a", To: "b", Seq: 40}
	if err := p.Publish(subj, e); err != nil || e.Seq != 40 {
		t.Fatalf("preset seq: %v, seq %d", err, e.Seq)
	}

	nc.Close()
	e = &Envelope{Type: TypeEOS, Job: "j", From: "a", To: "b"}
	err := p.Publish(subj, e)
	if !errors.Is(err, nats.ErrConnectionClosed) || !strings.Contains(err.Error(), subj) {
		t.Errorf("closed connection: %v", err)
	}
	if e.Seq != 2 {
		t.Errorf("failed publish: seq %d, want 2 (stays used)", e.Seq)
	}

	if _, err := Subscribe(nc, subj, nil, func(string, error) {}); err == nil {
		t.Error("Subscribe with nil handler succeeded")
	}
	if _, err := Subscribe(nc, subj, func(*Envelope) {}, func(string, error) {}); !errors.Is(err, nats.ErrConnectionClosed) {
		t.Errorf("Subscribe on closed connection: %v", err)
	}
}
