package actors

import (
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/rs/zerolog"

	"github.com/weirstream/weir/actors/mailbox"
	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/metrics"
)

// Node is one weir process's actor system with the node actor at the top of the
// supervision tree (node → job → task → input channels).
type Node struct {
	system *actor.ActorSystem
	pid    *actor.PID
	log    zerolog.Logger
	remote *Remote // nil outside a cluster
	tasks  atomic.Int64
	// dispatcher runs the mailboxes of tasks and channels
	dispatcher *workerDispatcher
	// stallAfter is how long a job goes without progress before it logs a
	// dump of its actors (StallDumpAfter).
	stallAfter time.Duration
	quit       chan struct{} // closed by Shutdown: stall watchers end
	quitOnce   sync.Once
	metrics    *metrics.Registry
	seen       jobsSeen // the jobs the metrics collector reports
}

// Tasks is the number of task instances running on this node (its used slots).
func (n *Node) Tasks() int { return int(n.tasks.Load()) }

// AttachRemote puts the node in a cluster: jobs may then place tasks on other
// nodes and this node may run parts of other nodes' jobs. Call it once,
// before submitting jobs.
func (n *Node) AttachRemote(r *Remote) {
	r.attach(n.system)
	n.remote = r
}

// newJob makes the Job record of plan p with options o on this node.
func (n *Node) newJob(p *plan.Job, o Options) *Job {
	j := &Job{Plan: p, Metrics: &Metrics{}, opts: o, node: n, done: make(chan struct{}), gone: make(chan struct{}), started: time.Now(),
		log: n.log.With().Str("job", p.Name).Logger()}
	n.seen.add(j)
	return j
}

// NewNode starts an actor system whose own logging goes through log, with
// a metrics registry of its own.
func NewNode(log zerolog.Logger) *Node { return NewNodeWithMetrics(log, nil) }

// NewNodeWithMetrics is NewNode reporting into reg (a new registry when
// nil): the node's jobs' counters are read from it at scrape time.
func NewNodeWithMetrics(log zerolog.Logger, reg *metrics.Registry) *Node {
	if reg == nil {
		reg = metrics.New()
	}
	sys := actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
		return slog.New(zerolog.NewSlogHandler(log.With().Str("component", "protoactor").Logger().Level(zerolog.WarnLevel)))
	}))
	n := &Node{system: sys, log: log, dispatcher: newWorkerDispatcher(8 * runtime.GOMAXPROCS(0)), stallAfter: StallDumpAfter,
		quit: make(chan struct{}), metrics: reg}
	reg.SetSource("actors", nodeCollector{n})
	na := &nodeActor{log: log, jobs: map[string]*Job{}}
	props := actor.PropsFromProducer(func() actor.Actor { return na },
		actor.WithMailbox(mailbox.New()),
		actor.WithSupervisor(na))
	pid, err := sys.Root.SpawnNamed(props, "node")
	if err != nil {
		// The name is fixed and the system is new, so this is a programming error.
		panic(fmt.Errorf("spawn node actor: %w", err))
	}
	n.pid = pid
	return n
}

// Submit validates a plan and starts it as a job under the node actor.
func (n *Node) Submit(p *plan.Job, opts Options) (*Job, error) {
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("invalid job: %w", err)
	}
	o, err := opts.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("job %q: %w", p.Name, err)
	}
	if err := checkInstanceBounds(p, o.Checkpoint.Enabled()); err != nil {
		return nil, err
	}
	if o.Checkpoint.Restore != nil {
		if err := CheckRestorable(p, o.Checkpoint.Restore); err != nil {
			return nil, err
		}
	}
	if o.Cluster != nil && n.remote == nil {
		return nil, fmt.Errorf("job %q: cluster placement needs a node in a cluster", p.Name)
	}
	j := n.newJob(p, o)
	reply := make(chan error, 1)
	props := actor.PropsFromProducer(func() actor.Actor { return newJobActor(j) }, actor.WithMailbox(mailbox.New()))
	n.system.Root.Send(n.pid, &spawnJobMsg{job: j, props: props, reply: reply})
	if err := <-reply; err != nil {
		return nil, err
	}
	j.track()
	go j.watchStalls(n.stallAfter) // ends when the job is done
	return j, nil
}

// Shutdown stops the actor system. It is safe to call more than once.
func (n *Node) Shutdown() {
	n.quitOnce.Do(func() { close(n.quit) })
	n.system.Shutdown()
	n.dispatcher.stop()
}

// ShutdownWithin is Shutdown for a process that is about to exit after a
// stop: it waits at most wait for actors busy in a long operator call (each
// ends by itself when its call returns) and reports whether all had ended.
func (n *Node) ShutdownWithin(wait time.Duration) bool {
	n.system.Shutdown()
	return n.dispatcher.stopWithin(wait)
}

// spawnJobMsg asks the node actor to start a job's actor: its coordinator,
// or its part on this node (a fragment).
type spawnJobMsg struct {
	priority
	job   *Job
	props *actor.Props
	reply chan error
}

// nodeActor is the root of a process's supervision tree.
type nodeActor struct {
	log  zerolog.Logger
	jobs map[string]*Job // job actor id → job
}

// HandleFailure is the node's supervisor strategy: a job actor that fails
// finishes its job with the error and is stopped.
func (a *nodeActor) HandleFailure(_ *actor.ActorSystem, sup actor.Supervisor, child *actor.PID, _ *actor.RestartStatistics, reason any, _ any) {
	if j, ok := a.jobs[child.Id]; ok {
		j.log.Error().Interface("reason", reason).Msg("job coordinator failed")
		j.finish(fmt.Errorf("job %q: coordinator failed: %v", j.Plan.Name, reason))
	}
	sup.StopChildren(child)
}

// Receive handles the node actor's messages.
func (a *nodeActor) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Terminated:
		if j, ok := a.jobs[m.Who.Id]; ok {
			close(j.gone)
		}
		delete(a.jobs, m.Who.Id)
	case *spawnJobMsg:
		j := m.job
		pid, err := ctx.SpawnNamed(m.props, "job-"+j.Plan.Name)
		if err != nil {
			m.reply <- fmt.Errorf("start job %q: %w", j.Plan.Name, err)
			return
		}
		a.jobs[pid.Id] = j
		j.mu.Lock()
		j.pid = pid
		j.mu.Unlock()
		m.reply <- nil
	}
}
