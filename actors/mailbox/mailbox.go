package mailbox

import (
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/asynkron/protoactor-go/actor"
)

const (
	idle int32 = iota
	running
)

const defaultCapacity = 16

// New returns a producer of priority mailboxes, for actor.WithMailbox.
func New(opts ...Option) actor.MailboxProducer {
	cfg := config{capacity: defaultCapacity}
	for _, o := range opts {
		o(&cfg)
	}
	return func() actor.Mailbox {
		m := &mailbox{
			normal:      newRing(cfg.capacity),
			batch:       newRing(cfg.capacity),
			priority:    newRing(cfg.capacity),
			system:      newRing(4),
			stats:       cfg.stats,
			middlewares: cfg.middlewares,
			inOrder:     cfg.inOrder,
		}
		if cfg.probe != nil {
			cfg.probe.m.Store(m)
		}
		return m
	}
}

// mailbox implements actor.Mailbox with a system lane, a priority lane and a
// normal lane.
//
// Producers push under mu. The consumer (the one goroutine running the
// mailbox) takes priority messages one at a time under mu, but takes normal
// messages in batches: when its private batch is empty it swaps it with the
// shared normal ring, so a busy mailbox locks once per batch, not once per
// message. Before every normal message it checks for queued priority messages,
// so a priority message still overtakes every normal message not yet
// delivered, including those already moved to the batch.
type mailbox struct {
	mu       sync.Mutex // guards normal and priority
	normal   ring
	priority ring
	batch    ring // normal messages taken by the consumer; consumer only

	sysMu  sync.Mutex // guards system
	system ring

	userMessages   atomic.Int32 // queued user messages, both lanes
	normalMessages atomic.Int32 // queued normal messages, in normal or batch
	prioMessages   atomic.Int32 // queued priority messages
	sysMessages    atomic.Int32 // queued system messages
	status         atomic.Int32 // idle or running
	suspended      atomic.Bool

	// handlers is set once by RegisterHandlers, and started by Start.
	// protoactor publishes a new actor's process before it registers the
	// handlers and posts Started, and a sender holding a stale PID of an
	// actor stopped under the same name reaches the new process by that name,
	// so a message can be posted before: it waits in its lane, and Start,
	// which the spawner calls after posting Started, schedules it.
	handlers    atomic.Pointer[handlers]
	started     atomic.Bool
	inOrder     bool // every user message in the normal lane
	stats       *Stats
	middlewares []actor.MailboxMiddleware
}

var _ actor.Mailbox = (*mailbox)(nil)

// handlers are the actor's invoker and dispatcher.
type handlers struct {
	invoker    actor.MessageInvoker
	dispatcher actor.Dispatcher
}

// isPriority classifies a user message, looking inside envelopes.
func isPriority(m any) bool {
	if env, ok := m.(*actor.MessageEnvelope); ok {
		m = env.Message
	}
	_, ok := m.(Priority)
	return ok
}

// PostUserMessage queues a user message in its lane and schedules the mailbox.
// Like protoactor's default mailbox, the messages of an actor.MessageBatch
// are posted one by one before the batch itself. A nil message is dropped.
func (m *mailbox) PostUserMessage(msg any) {
	if msg == nil {
		return
	}
	if batch, ok := msg.(actor.MessageBatch); ok {
		for _, b := range batch.GetMessages() {
			m.PostUserMessage(b)
		}
	}
	if env, ok := msg.(*actor.MessageEnvelope); ok {
		if batch, ok := env.Message.(actor.MessageBatch); ok {
			for _, b := range batch.GetMessages() {
				m.PostUserMessage(b)
			}
		}
	}
	for _, mw := range m.middlewares {
		mw.MessagePosted(msg)
	}
	prio := !m.inOrder && isPriority(msg)
	m.mu.Lock()
	if prio {
		m.priority.push(msg)
		n := m.prioMessages.Add(1)
		if m.stats != nil {
			observe(&m.stats.PriorityLen, &m.stats.PriorityMax, int(n))
		}
	} else {
		m.normal.push(msg)
		n := m.normalMessages.Add(1)
		if m.stats != nil {
			observe(&m.stats.NormalLen, &m.stats.NormalMax, int(n))
		}
	}
	m.userMessages.Add(1)
	m.mu.Unlock()
	m.schedule()
}

// PostSystemMessage queues a system message and schedules the mailbox. A nil
// message is dropped.
func (m *mailbox) PostSystemMessage(msg any) {
	if msg == nil {
		return
	}
	for _, mw := range m.middlewares {
		mw.MessagePosted(msg)
	}
	m.sysMu.Lock()
	m.system.push(msg)
	m.sysMessages.Add(1)
	m.sysMu.Unlock()
	m.schedule()
}

// RegisterHandlers sets the actor's invoker and dispatcher. Nothing runs
// before Start.
func (m *mailbox) RegisterHandlers(invoker actor.MessageInvoker, dispatcher actor.Dispatcher) {
	m.handlers.Store(&handlers{invoker: invoker, dispatcher: dispatcher})
}

// Start tells the middlewares the mailbox has started and schedules what was
// posted before, Started among it: system messages run first, so the actor
// sees Started before any user message.
func (m *mailbox) Start() {
	for _, mw := range m.middlewares {
		mw.MailboxStarted()
	}
	m.started.Store(true)
	if m.sysMessages.Load() > 0 || m.userMessages.Load() > 0 {
		m.schedule()
	}
}

// UserMessageCount returns the number of queued user messages, both lanes.
func (m *mailbox) UserMessageCount() int {
	return int(m.userMessages.Load())
}

// schedule runs the mailbox on its dispatcher unless it runs already; before
// Start it leaves the messages queued (Start schedules them: a poster either
// sees started or its count is seen there).
func (m *mailbox) schedule() {
	h := m.handlers.Load()
	if h == nil || !m.started.Load() {
		return
	}
	if m.status.CompareAndSwap(idle, running) {
		h.dispatcher.Schedule(m.processMessages)
	}
}

// processMessages runs the mailbox until it is empty (or suspended with no
// system message), then goes idle, re-checking for messages posted meanwhile.
func (m *mailbox) processMessages() {
	for {
		m.run()
		m.batch.shrink() // still the only goroutine running the mailbox
		m.status.Store(idle)
		sys := m.sysMessages.Load()
		user := m.userMessages.Load()
		if sys > 0 || (!m.suspended.Load() && user > 0) {
			if m.status.CompareAndSwap(idle, running) {
				continue
			}
		}
		if user == 0 && !m.suspended.Load() {
			for _, mw := range m.middlewares {
				mw.MailboxEmpty()
			}
		}
		return
	}
}

// run delivers messages until there is nothing it may deliver. A panic in the
// actor is recovered and escalated with the message that caused it.
func (m *mailbox) run() {
	var msg any
	h := m.handlers.Load() // set: run is only scheduled once it is
	defer func() {
		if r := recover(); r != nil {
			h.invoker.EscalateFailure(r, msg)
		}
	}()

	i, t := 0, h.dispatcher.Throughput()
	for {
		if i > t {
			i = 0
			runtime.Gosched()
		}
		i++

		if msg = m.popSystem(); msg != nil {
			switch msg.(type) {
			case *actor.SuspendMailbox:
				m.suspended.Store(true)
			case *actor.ResumeMailbox:
				m.suspended.Store(false)
			default:
				h.invoker.InvokeSystemMessage(msg)
			}
			for _, mw := range m.middlewares {
				mw.MessageReceived(msg)
			}
			continue
		}

		if m.suspended.Load() {
			return
		}

		if msg = m.popUser(); msg == nil {
			return
		}
		h.invoker.InvokeUserMessage(msg)
		for _, mw := range m.middlewares {
			mw.MessageReceived(msg)
		}
	}
}

func (m *mailbox) popSystem() any {
	if m.sysMessages.Load() == 0 {
		return nil
	}
	m.sysMu.Lock()
	msg := m.system.pop()
	if msg != nil {
		m.sysMessages.Add(-1)
	}
	m.sysMu.Unlock()
	return msg
}

// popUser takes the oldest priority message, or else the oldest normal one.
// Only the goroutine running the mailbox calls it.
func (m *mailbox) popUser() any {
	if m.prioMessages.Load() > 0 {
		m.mu.Lock()
		msg := m.priority.pop()
		if msg != nil {
			m.prioMessages.Add(-1)
			m.userMessages.Add(-1)
		}
		m.priority.shrink()
		m.mu.Unlock()
		if msg != nil {
			if m.stats != nil {
				m.stats.PriorityLen.Add(-1)
			}
			m.stamp(msg)
			return msg
		}
	}
	if m.batch.len() == 0 {
		if m.normalMessages.Load() == 0 {
			return nil
		}
		m.mu.Lock()
		m.batch, m.normal = m.normal, m.batch
		m.mu.Unlock()
	}
	msg := m.batch.pop()
	if msg == nil {
		return nil
	}
	m.normalMessages.Add(-1)
	m.userMessages.Add(-1)
	if m.stats != nil {
		m.stats.NormalLen.Add(-1)
	}
	return msg
}
