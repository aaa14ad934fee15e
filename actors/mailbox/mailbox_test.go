package mailbox

import (
	"fmt"
	"slices"
	"testing"

	"github.com/asynkron/protoactor-go/actor"
)

// These tests drive a mailbox directly with a recording invoker and a manual
// dispatcher: no goroutines, fully deterministic.

type data int // a normal-lane message

type barrier int // a priority-lane message

func (barrier) WeirPriority() {}

type sysMsg string // a system message handed to the invoker

type escalation struct {
	reason, msg any
}

// recorder is an actor.MessageInvoker that records what it is given.
type recorder struct {
	log       []any
	escalated []escalation
	panicOn   any
}

func (r *recorder) InvokeSystemMessage(m any) {
	if r.panicOn != nil && m == r.panicOn {
		panic(fmt.Sprintf("boom on %v", m))
	}
	r.log = append(r.log, m)
}

func (r *recorder) InvokeUserMessage(m any) {
	if r.panicOn != nil && m == r.panicOn {
		panic(fmt.Sprintf("boom on %v", m))
	}
	r.log = append(r.log, m)
}

func (r *recorder) EscalateFailure(reason, msg any) {
	r.escalated = append(r.escalated, escalation{reason, msg})
}

// manual is an actor.Dispatcher that runs scheduled work only when told to.
type manual struct {
	queued     []func()
	throughput int
}

func (d *manual) Schedule(fn func()) { d.queued = append(d.queued, fn) }
func (d *manual) Throughput() int    { return d.throughput }

// runAll runs scheduled work, including work scheduled while running.
func (d *manual) runAll() {
	for len(d.queued) > 0 {
		fn := d.queued[0]
		d.queued = d.queued[1:]
		fn()
	}
}

func newTestMailbox(opts ...Option) (*mailbox, *recorder, *manual) {
	mb := New(opts...)().(*mailbox)
	rec := &recorder{}
	d := &manual{throughput: 300}
	mb.RegisterHandlers(rec, d)
	mb.Start()
	return mb, rec, d
}

func TestPriorityOvertakesQueuedData(t *testing.T) {
	mb, rec, d := newTestMailbox()
	for i := 0; i < 5; i++ {
		mb.PostUserMessage(data(i))
	}
	mb.PostUserMessage(barrier(1))
	mb.PostUserMessage(data(5))
	mb.PostUserMessage(barrier(2))
	if got := mb.UserMessageCount(); got != 8 {
		t.Fatalf("UserMessageCount = %d, want 8", got)
	}
	d.runAll()
	want := []any{barrier(1), barrier(2), data(0), data(1), data(2), data(3), data(4), data(5)}
	if !slices.Equal(rec.log, want) {
		t.Fatalf("delivered %v, want %v", rec.log, want)
	}
	if got := mb.UserMessageCount(); got != 0 {
		t.Fatalf("UserMessageCount after run = %d", got)
	}
}

func TestSystemMessagesFirst(t *testing.T) {
	mb, rec, d := newTestMailbox()
	mb.PostUserMessage(data(1))
	mb.PostUserMessage(barrier(1))
	mb.PostSystemMessage(sysMsg("restart"))
	d.runAll()
	want := []any{sysMsg("restart"), barrier(1), data(1)}
	if !slices.Equal(rec.log, want) {
		t.Fatalf("delivered %v, want %v", rec.log, want)
	}
}

func TestEnvelopeClassifiedByPayload(t *testing.T) {
	mb, rec, d := newTestMailbox()
	sender := actor.NewPID("nonhost", "sender")
	envData := &actor.MessageEnvelope{Message: data(1), Sender: sender}
	envBarrier := &actor.MessageEnvelope{Message: barrier(7), Sender: sender}
	mb.PostUserMessage(envData)
	mb.PostUserMessage(data(2))
	mb.PostUserMessage(envBarrier)
	d.runAll()
	want := []any{envBarrier, envData, data(2)} // the envelopes themselves are delivered
	if len(rec.log) != len(want) {
		t.Fatalf("delivered %v, want %v", rec.log, want)
	}
	for i := range want {
		if rec.log[i] != want[i] {
			t.Fatalf("message %d = %#v, want %#v", i, rec.log[i], want[i])
		}
	}
}

func TestSuspendAndResume(t *testing.T) {
	mb, rec, d := newTestMailbox()
	mb.PostSystemMessage(&actor.SuspendMailbox{})
	d.runAll()
	for i := 0; i < 3; i++ {
		mb.PostUserMessage(data(i))
	}
	mb.PostUserMessage(barrier(1))
	d.runAll()
	if len(rec.log) != 0 {
		t.Fatalf("suspended mailbox delivered %v", rec.log)
	}
	mb.PostSystemMessage(sysMsg("watch")) // system messages still flow while suspended
	d.runAll()
	if !slices.Equal(rec.log, []any{sysMsg("watch")}) {
		t.Fatalf("suspended mailbox: delivered %v, want only the system message", rec.log)
	}
	mb.PostSystemMessage(&actor.ResumeMailbox{})
	d.runAll()
	want := []any{sysMsg("watch"), barrier(1), data(0), data(1), data(2)}
	if !slices.Equal(rec.log, want) {
		t.Fatalf("after resume delivered %v, want %v", rec.log, want)
	}
}

func TestPanicEscalatedWithMessage(t *testing.T) {
	mb, rec, d := newTestMailbox()
	rec.panicOn = data(2)
	for i := 0; i < 4; i++ {
		mb.PostUserMessage(data(i))
	}
	d.runAll()
	if len(rec.escalated) != 1 {
		t.Fatalf("escalated %d failures, want 1", len(rec.escalated))
	}
	e := rec.escalated[0]
	if e.msg != data(2) || e.reason != "boom on 2" {
		t.Fatalf("escalated (%v, %v), want (boom on 2, 2)", e.reason, e.msg)
	}
	// The failing message is not redelivered; the rest still are (the real
	// actor context would suspend the mailbox here until its supervisor acts).
	if want := []any{data(0), data(1), data(3)}; !slices.Equal(rec.log, want) {
		t.Fatalf("delivered %v, want %v", rec.log, want)
	}
}

// TestPanicInSystemMessageLeavesMailboxSchedulable: an actor that panics in
// a system message (a task failing on its channel's Terminated) has the
// panic escalated, and the mailbox goes idle: what is posted later is
// scheduled and delivered, so no message waits in a mailbox nobody runs.
func TestPanicInSystemMessageLeavesMailboxSchedulable(t *testing.T) {
	mb, rec, d := newTestMailbox()
	rec.panicOn = sysMsg("terminated")
	mb.PostUserMessage(data(1))
	mb.PostSystemMessage(sysMsg("terminated"))
	d.runAll()
	if len(rec.escalated) != 1 || rec.escalated[0].msg != sysMsg("terminated") {
		t.Fatalf("escalated %v, want the failing system message once", rec.escalated)
	}
	if mb.status.Load() != idle {
		t.Fatal("mailbox still marked running after the panic: it would never be scheduled again")
	}
	mb.PostUserMessage(barrier(2))
	mb.PostUserMessage(data(3))
	if len(d.queued) != 1 {
		t.Fatalf("posting after the panic scheduled %d runs, want 1", len(d.queued))
	}
	d.runAll()
	if want := []any{data(1), barrier(2), data(3)}; !slices.Equal(rec.log, want) {
		t.Fatalf("delivered %v, want %v", rec.log, want)
	}
}

func TestStatsCountLanes(t *testing.T) {
	var st Stats
	mb, _, d := newTestMailbox(WithStats(&st))
	for i := 0; i < 5; i++ {
		mb.PostUserMessage(data(i))
	}
	mb.PostUserMessage(barrier(1))
	mb.PostUserMessage(&actor.MessageEnvelope{Message: barrier(2)})
	if st.NormalLen.Load() != 5 || st.NormalMax.Load() != 5 || st.PriorityLen.Load() != 2 || st.PriorityMax.Load() != 2 {
		t.Fatalf("before run: normal %d/%d priority %d/%d, want 5/5 2/2",
			st.NormalLen.Load(), st.NormalMax.Load(), st.PriorityLen.Load(), st.PriorityMax.Load())
	}
	d.runAll()
	if st.NormalLen.Load() != 0 || st.NormalMax.Load() != 5 || st.PriorityLen.Load() != 0 || st.PriorityMax.Load() != 2 {
		t.Fatalf("after run: normal %d/%d priority %d/%d, want 0/5 0/2",
			st.NormalLen.Load(), st.NormalMax.Load(), st.PriorityLen.Load(), st.PriorityMax.Load())
	}
	mb.PostUserMessage(data(9))
	if st.NormalLen.Load() != 1 || st.NormalMax.Load() != 5 {
		t.Fatalf("max must not shrink: normal %d/%d", st.NormalLen.Load(), st.NormalMax.Load())
	}
}

// countingMiddleware records the middleware calls.
type countingMiddleware struct{ started, posted, received, empty int }

func (c *countingMiddleware) MailboxStarted()     { c.started++ }
func (c *countingMiddleware) MessagePosted(any)   { c.posted++ }
func (c *countingMiddleware) MessageReceived(any) { c.received++ }
func (c *countingMiddleware) MailboxEmpty()       { c.empty++ }

func TestMiddlewares(t *testing.T) {
	mw := &countingMiddleware{}
	mb, _, d := newTestMailbox(WithMiddlewares(mw))
	mb.PostUserMessage(data(1))
	mb.PostUserMessage(barrier(1))
	mb.PostSystemMessage(sysMsg("x"))
	d.runAll()
	if mw.started != 1 || mw.posted != 3 || mw.received != 3 || mw.empty != 1 {
		t.Fatalf("middleware saw %+v", *mw)
	}
}

// batch is an actor.MessageBatch.
type batch []any

func (b batch) GetMessages() []any { return b }

func TestMessageBatchLikeDefaultMailbox(t *testing.T) {
	mb, rec, d := newTestMailbox()
	mb.PostUserMessage(data(0))
	b := batch{data(1), barrier(1)}
	mb.PostUserMessage(b)
	d.runAll()
	want := []any{barrier(1), data(0), data(1)}
	if len(rec.log) != 4 || !slices.Equal(rec.log[:3], want) {
		t.Fatalf("delivered %v, want %v then the batch", rec.log, want)
	}
	if _, ok := rec.log[3].(batch); !ok {
		t.Fatalf("last delivered %v, want the batch itself", rec.log[3])
	}
}

// Throughput only decides when the mailbox yields; every message still comes
// out, in order, in one scheduled run.
func TestSmallThroughputDeliversEverything(t *testing.T) {
	mb, rec, d := newTestMailbox()
	d.throughput = 1
	for i := 0; i < 50; i++ {
		mb.PostUserMessage(data(i))
	}
	if len(d.queued) != 1 {
		t.Fatalf("scheduled %d times, want 1", len(d.queued))
	}
	d.runAll()
	if len(rec.log) != 50 {
		t.Fatalf("delivered %d messages, want 50", len(rec.log))
	}
	for i, m := range rec.log {
		if m != data(i) {
			t.Fatalf("message %d = %v", i, m)
		}
	}
}

// postingInvoker posts a barrier into the mailbox while handling data(0), when
// the rest of the data has already been taken into the consumer's batch.
type postingInvoker struct {
	recorder
	mb *mailbox
}

func (p *postingInvoker) InvokeUserMessage(m any) {
	p.recorder.InvokeUserMessage(m)
	if m == data(0) {
		p.mb.PostUserMessage(barrier(1))
		p.mb.PostUserMessage(data(100))
	}
}

func TestPriorityOvertakesConsumerBatch(t *testing.T) {
	mb := New()().(*mailbox)
	inv := &postingInvoker{mb: mb}
	d := &manual{throughput: 300}
	mb.RegisterHandlers(inv, d)
	mb.Start()
	for i := 0; i < 4; i++ {
		mb.PostUserMessage(data(i))
	}
	d.runAll()
	want := []any{data(0), barrier(1), data(1), data(2), data(3), data(100)}
	if !slices.Equal(inv.log, want) {
		t.Fatalf("delivered %v, want %v", inv.log, want)
	}
}

func TestNilMessagesDropped(t *testing.T) {
	mb, rec, d := newTestMailbox()
	mb.PostUserMessage(nil)
	mb.PostSystemMessage(nil)
	mb.PostUserMessage(data(1))
	d.runAll()
	if !slices.Equal(rec.log, []any{data(1)}) || mb.UserMessageCount() != 0 {
		t.Fatalf("delivered %v, %d still queued", rec.log, mb.UserMessageCount())
	}
}

// TestPostedBeforeStartWaits: protoactor publishes a new actor's process
// before it registers the mailbox's handlers and posts Started, so a message
// can arrive first. It waits in its lane (nothing is scheduled, nothing
// races) and is delivered after Started once the spawner starts the mailbox.
func TestPostedBeforeStartWaits(t *testing.T) {
	mb := New()().(*mailbox)
	mb.PostUserMessage(data(1))
	mb.PostUserMessage(barrier(2))
	rec, d := &recorder{}, &manual{throughput: 300}
	mb.RegisterHandlers(rec, d)
	mb.PostUserMessage(data(3))
	mb.PostSystemMessage(sysMsg("started"))
	if len(d.queued) != 0 {
		t.Fatalf("%d runs scheduled before Start, want none", len(d.queued))
	}
	mb.Start()
	if len(d.queued) != 1 {
		t.Fatalf("starting scheduled %d runs, want 1", len(d.queued))
	}
	d.runAll()
	want := []any{sysMsg("started"), barrier(2), data(1), data(3)}
	if !slices.Equal(rec.log, want) {
		t.Fatalf("delivered %v, want %v", rec.log, want)
	}
}

// TestInOrderKeepsPriorityInLine: with InOrder a barrier waits behind the
// data posted before it.
func TestInOrderKeepsPriorityInLine(t *testing.T) {
	mb, rec, d := newTestMailbox(InOrder())
	mb.PostUserMessage(data(1))
	mb.PostUserMessage(barrier(2))
	mb.PostUserMessage(data(3))
	d.runAll()
	want := []any{data(1), barrier(2), data(3)}
	if !slices.Equal(rec.log, want) {
		t.Fatalf("delivered %v, want %v", rec.log, want)
	}
}
