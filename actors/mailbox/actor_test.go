package mailbox

import (
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
)

// These tests run the mailbox inside a real protoactor actor system.

const waitLimit = 10 * time.Second

func newSystem(t testing.TB) *actor.ActorSystem {
	t.Helper()
	quiet := func(*actor.ActorSystem) *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
	sys := actor.NewActorSystem(actor.WithLoggerFactory(quiet))
	t.Cleanup(sys.Shutdown)
	return sys
}

// recv waits for one value from ch, failing the test after waitLimit.
func recv[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(waitLimit):
		t.Fatalf("timed out waiting for %s", what)
		var zero T
		return zero
	}
}

// recvN collects n values from ch.
func recvN[T any](t testing.TB, ch <-chan T, n int, what string) []T {
	t.Helper()
	out := make([]T, 0, n)
	for len(out) < n {
		out = append(out, recv(t, ch, what))
	}
	return out
}

// wantOrder checks that the actor got the barrier first, then data 0..n-1.
func wantOrder(t *testing.T, got []any, b any, n int) {
	t.Helper()
	if len(got) != n+1 {
		t.Fatalf("received %d messages, want %d", len(got), n+1)
	}
	if got[0] != b {
		t.Fatalf("first message after release = %#v, want %#v (all: %v)", got[0], b, got)
	}
	for i := 0; i < n; i++ {
		if got[i+1] != data(i) {
			t.Fatalf("message %d = %#v, want data(%d) (all: %v)", i+1, got[i+1], i, got)
		}
	}
}

// blockingActor blocks in Receive on "block" until release is closed, and
// reports every data or barrier it gets (unwrapped) on got.
type blockingActor struct {
	entered, release chan struct{}
	got              chan any
}

func newBlockingActor() *blockingActor {
	return &blockingActor{entered: make(chan struct{}), release: make(chan struct{}), got: make(chan any, 1024)}
}

func (a *blockingActor) Receive(c actor.Context) {
	switch m := c.Message().(type) {
	case string:
		if m == "block" {
			close(a.entered)
			<-a.release
		}
	case data:
		a.got <- m
	case barrier:
		a.got <- m
		if c.Sender() != nil {
			c.Respond(ack(m))
		}
	}
}

type ack int

func TestActorBlockedInReceive(t *testing.T) {
	sys := newSystem(t)
	var st Stats
	a := newBlockingActor()
	pid := sys.Root.Spawn(actor.PropsFromProducer(func() actor.Actor { return a }, actor.WithMailbox(New(WithStats(&st)))))

	sys.Root.Send(pid, "block")
	recv(t, a.entered, "actor to block")
	const n = 100
	for i := 0; i < n; i++ {
		sys.Root.Send(pid, data(i))
	}
	sys.Root.Send(pid, barrier(1))
	if st.NormalLen.Load() != n || st.PriorityLen.Load() != 1 {
		t.Fatalf("queued normal %d priority %d, want %d and 1", st.NormalLen.Load(), st.PriorityLen.Load(), n)
	}
	close(a.release)
	wantOrder(t, recvN(t, a.got, n+1, "messages"), barrier(1), n)
	if st.NormalMax.Load() != n || st.PriorityMax.Load() != 1 {
		t.Fatalf("max normal %d priority %d, want %d and 1", st.NormalMax.Load(), st.PriorityMax.Load(), n)
	}
}

func TestActorSuspendedMailbox(t *testing.T) {
	sys := newSystem(t)
	a := newBlockingActor()
	pid := sys.Root.Spawn(actor.PropsFromProducer(func() actor.Actor { return a }, actor.WithMailbox(New())))
	proc, ok := sys.ProcessRegistry.Get(pid)
	if !ok {
		t.Fatal("spawned actor not in the process registry")
	}
	// Suspend is queued before the data, and system messages are always
	// taken first, so none of the data can be delivered before it.
	proc.SendSystemMessage(pid, &actor.SuspendMailbox{})
	const n = 50
	for i := 0; i < n; i++ {
		sys.Root.Send(pid, data(i))
	}
	sys.Root.Send(pid, barrier(2))
	select {
	case m := <-a.got:
		t.Fatalf("suspended actor received %v", m)
	default:
	}
	proc.SendSystemMessage(pid, &actor.ResumeMailbox{})
	wantOrder(t, recvN(t, a.got, n+1, "messages"), barrier(2), n)
}

// A barrier sent with a request (wrapped in a MessageEnvelope with a sender)
// still overtakes, and the actor can still answer its sender.
func TestActorRequestEnvelopeOvertakes(t *testing.T) {
	sys := newSystem(t)
	a := newBlockingActor()
	pid := sys.Root.Spawn(actor.PropsFromProducer(func() actor.Actor { return a }, actor.WithMailbox(New())))
	acks := make(chan ack, 1)
	replyTo := sys.Root.Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if m, ok := c.Message().(ack); ok {
			acks <- m
		}
	}))

	sys.Root.Send(pid, "block")
	recv(t, a.entered, "actor to block")
	const n = 20
	for i := 0; i < n; i++ {
		if i%2 == 0 {
			sys.Root.Send(pid, data(i))
		} else { // data in envelopes stays in the normal lane
			sys.Root.RequestWithCustomSender(pid, data(i), replyTo)
		}
	}
	sys.Root.RequestWithCustomSender(pid, barrier(3), replyTo)
	close(a.release)
	wantOrder(t, recvN(t, a.got, n+1, "messages"), barrier(3), n)
	if got := recv(t, acks, "reply to the requesting sender"); got != ack(3) {
		t.Fatalf("reply = %v, want ack(3)", got)
	}
}

// Ordering under concurrent senders: every message arrives once, FIFO per
// sender within each lane.
type tagData struct{ from, seq int }
type tagBarrier struct{ from, seq int }

func (tagBarrier) WeirPriority() {}

func TestActorFIFOPerLaneConcurrentSenders(t *testing.T) {
	sys := newSystem(t)
	const senders, perSender = 4, 2000
	errs := make(chan string, 16)
	done := make(chan struct{})
	lastData := make([]int, senders)
	lastBarrier := make([]int, senders)
	for i := range lastData {
		lastData[i], lastBarrier[i] = -1, -1
	}
	total := 0
	expected := senders * (perSender + perSender/10)
	pid := sys.Root.Spawn(actor.PropsFromFunc(func(c actor.Context) {
		switch m := c.Message().(type) {
		case tagData:
			if m.seq != lastData[m.from]+1 {
				errs <- "data out of order"
			}
			lastData[m.from] = m.seq
		case tagBarrier:
			if m.seq != lastBarrier[m.from]+1 {
				errs <- "barrier out of order"
			}
			lastBarrier[m.from] = m.seq
		default:
			return
		}
		if total++; total == expected {
			close(done)
		}
	}, actor.WithMailbox(New())))

	var wg sync.WaitGroup
	for s := 0; s < senders; s++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b := 0
			for i := 0; i < perSender; i++ {
				sys.Root.Send(pid, tagData{s, i})
				if i%10 == 9 {
					sys.Root.Send(pid, tagBarrier{s, b})
					b++
				}
			}
		}()
	}
	wg.Wait()
	select {
	case <-done:
	case e := <-errs:
		t.Fatal(e)
	case <-time.After(waitLimit):
		t.Fatalf("timed out: received %d of %d", total, expected)
	}
	select {
	case e := <-errs:
		t.Fatal(e)
	default:
	}
}

// recordingStrategy records each failure and restarts the child.
type recordingStrategy struct{ failures chan failure }

type failure struct {
	reason, message any
	child           *actor.PID
}

func (s *recordingStrategy) HandleFailure(_ *actor.ActorSystem, sup actor.Supervisor, child *actor.PID, _ *actor.RestartStatistics, reason, message any) {
	s.failures <- failure{reason, message, child}
	sup.RestartChildren(child)
}

func TestActorPanicReachesSupervisor(t *testing.T) {
	sys := newSystem(t)
	strategy := &recordingStrategy{failures: make(chan failure, 4)}
	got := make(chan any, 16)
	childProps := actor.PropsFromFunc(func(c actor.Context) {
		switch m := c.Message().(type) {
		case string:
			if m == "panic" {
				panic("kaboom")
			}
		case *actor.Restarting:
			got <- "restarting"
		case data, barrier:
			got <- m
		}
	}, actor.WithMailbox(New()))
	children := make(chan *actor.PID, 1)
	sys.Root.Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*actor.Started); ok {
			children <- c.Spawn(childProps)
		}
	}, actor.WithSupervisor(strategy)))
	child := recv(t, children, "child spawn")

	sys.Root.Send(child, data(1))
	sys.Root.Send(child, "panic")
	sys.Root.Send(child, data(2))
	f := recv(t, strategy.failures, "failure at the supervisor")
	if f.reason != "kaboom" || f.message != "panic" || !f.child.Equal(child) {
		t.Fatalf("failure = (%v, %v, %v), want (kaboom, panic, %v)", f.reason, f.message, f.child, child)
	}
	want := []any{data(1), "restarting", data(2)}
	gotMsgs := recvN(t, got, len(want), "messages around the restart")
	for i := range want {
		if gotMsgs[i] != want[i] {
			t.Fatalf("child received %v, want %v", gotMsgs, want)
		}
	}
	sys.Root.Send(child, barrier(9))
	if m := recv(t, got, "message after restart"); m != barrier(9) {
		t.Fatalf("after restart received %v", m)
	}
}

// buffer stands for a batch of records; one preallocated value avoids
// measuring boxing.
type buffer struct{ n int }

func BenchmarkThroughput(b *testing.B) {
	producers := map[string]func() actor.MailboxProducer{
		"weir":                 func() actor.MailboxProducer { return New() },
		"protoactor-unbounded": func() actor.MailboxProducer { return actor.Unbounded() },
	}
	for _, name := range []string{"weir", "protoactor-unbounded"} {
		for _, senders := range []int{1, 4} {
			b.Run(name+"/senders="+string(rune('0'+senders)), func(b *testing.B) {
				sys := newSystem(b)
				done := make(chan struct{})
				want := b.N * senders
				count := 0
				pid := sys.Root.Spawn(actor.PropsFromFunc(func(c actor.Context) {
					if _, ok := c.Message().(*buffer); ok {
						if count++; count == want {
							close(done)
						}
					}
				}, actor.WithMailbox(producers[name]())))
				msg := &buffer{n: 100}
				b.ResetTimer()
				var wg sync.WaitGroup
				for s := 0; s < senders; s++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for i := 0; i < b.N; i++ {
							sys.Root.Send(pid, msg)
						}
					}()
				}
				wg.Wait()
				<-done
			})
		}
	}
}

// BenchmarkThroughputWithCredit bounds the messages in flight as weir's
// credit-based channels do: the sender waits for credit once window messages
// are unacknowledged, and the actor grants credit every window/4 messages.
func BenchmarkThroughputWithCredit(b *testing.B) {
	const window = 1024
	producers := map[string]func() actor.MailboxProducer{
		"weir":                 func() actor.MailboxProducer { return New() },
		"protoactor-unbounded": func() actor.MailboxProducer { return actor.Unbounded() },
	}
	for _, name := range []string{"weir", "protoactor-unbounded"} {
		b.Run(name, func(b *testing.B) {
			sys := newSystem(b)
			credit := make(chan int, window)
			count := 0
			pid := sys.Root.Spawn(actor.PropsFromFunc(func(c actor.Context) {
				if _, ok := c.Message().(*buffer); ok {
					if count++; count%(window/4) == 0 {
						credit <- window / 4
					}
				}
			}, actor.WithMailbox(producers[name]())))
			msg := &buffer{n: 100}
			avail := window
			b.ResetTimer()
			received := 0 // credit grants already taken
			for i := 0; i < b.N; i++ {
				for avail == 0 {
					avail += <-credit
					received++
				}
				avail--
				sys.Root.Send(pid, msg)
			}
			for grants := b.N / (window / 4); received < grants; received++ {
				<-credit // wait until the actor has taken the messages
			}
		})
	}
}

// lengthsAsk is a priority message that records the lane lengths it was
// delivered with.
type lengthsAsk struct{ got chan Lengths }

func (lengthsAsk) WeirPriority()              {}
func (a lengthsAsk) MailboxLengths(l Lengths) { a.got <- l }

func TestPriorityMessageIsStampedWithLaneLengths(t *testing.T) {
	sys := newSystem(t)
	a := newBlockingActor()
	pid := sys.Root.Spawn(actor.PropsFromProducer(func() actor.Actor { return a }, actor.WithMailbox(New())))
	sys.Root.Send(pid, "block")
	recv(t, a.entered, "actor to block")
	const n = 7
	for i := 0; i < n; i++ {
		sys.Root.Send(pid, data(i))
	}
	ask := lengthsAsk{got: make(chan Lengths, 1)}
	sys.Root.Send(pid, ask)
	sys.Root.Send(pid, barrier(1))
	close(a.release)
	if got, want := recv(t, ask.got, "the stamped lengths"), (Lengths{Normal: n, Priority: 1}); got != want {
		t.Fatalf("lengths %+v, want %+v", got, want)
	}
	wantOrder(t, recvN(t, a.got, n+1, "messages"), barrier(1), n)
}
