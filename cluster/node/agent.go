package node

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/weirstream/weir/actors"
	"github.com/weirstream/weir/cluster"
	"github.com/weirstream/weir/cluster/coord"
	"github.com/weirstream/weir/internal/ratelimit"
	"github.com/weirstream/weir/store"
	"github.com/weirstream/weir/transport"
)

// Agent is a long-running cluster node: it heartbeats, tracks the other
// nodes, runs parts of jobs for coordinators, coordinates the jobs submitted
// to it, and takes over the coordination of jobs whose coordinator died.
// Its decisions are coord.Core's; the agent carries them out.
type Agent struct {
	cfg      Config
	log      zerolog.Logger
	nc       *nats.Conn
	js       jetstream.JetStream
	storeJS  jetstream.JetStream // the checkpoint store's (Config.StoreConn)
	node     *actors.Node
	remote   *actors.Remote
	counters *transport.Counters
	pub      *transport.Publisher
	leases   *cluster.Leases
	jobs     *cluster.Jobs
	local    *store.Local
	started  time.Time
	fence    *lockedFence        // highest coordinator epoch seen per job
	held     []cluster.HeldState // the local copy's inventory, for heartbeats (under mu)

	mu    sync.Mutex
	core  *coord.Core
	coord map[string]*coordJob
	parts map[string]*actors.Job

	badLog ratelimit.Log // warnings about bad input, rate-limited
	rates  rateBook      // samples of the local jobs' counters for status rates
	subs   []*nats.Subscription
	probes *prober
	hb     atomic.Pointer[cluster.HeartbeatSender] // set once the node listens (after subscribe)
	joined chan struct{}                           // closed when a node joins, then replaced (under mu)
	quit   chan struct{}
	wg     sync.WaitGroup
	once   sync.Once
}

// leavingSubject is where a node announces a graceful exit.
func leavingSubject(node string) string { return transport.NodeSubject(node, "leaving") }

// Start joins the cluster over nc as the node cfg describes. The caller
// owns nc and ends the agent with Leave (graceful) and Shutdown.
func Start(ctx context.Context, cfg Config, nc *nats.Conn) (*Agent, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	if cfg.DisconnectGrace == 0 {
		cfg.DisconnectGrace = min(DefaultDisconnectGrace, cfg.HeartbeatTimeout)
	}
	if cfg.Counters == nil {
		cfg.Counters = &transport.Counters{}
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("jetstream: %w", err)
	}
	storeJS := js
	if cfg.StoreConn != nil {
		if storeJS, err = jetstream.New(cfg.StoreConn); err != nil {
			return nil, fmt.Errorf("jetstream of the store connection: %w", err)
		}
	}
	started := time.Now()
	a := &Agent{cfg: cfg, log: cfg.Log, nc: nc, js: js, storeJS: storeJS, counters: cfg.Counters, pub: transport.NewPublisher(nc), started: started,
		core: coord.New(coord.Config{Self: cfg.ID, Boot: started, HeartbeatTimeout: cfg.HeartbeatTimeout, PlacementTimeout: cfg.PlacementTimeout,
			LocalWait: cfg.LocalWait, DisconnectGrace: cfg.DisconnectGrace}),
		coord: map[string]*coordJob{}, parts: map[string]*actors.Job{}, fence: &lockedFence{f: cluster.NewFence()}, joined: make(chan struct{}), quit: make(chan struct{})}
	if a.leases, err = cluster.OpenLeases(ctx, js, cluster.DefaultLeaseBucket); err != nil {
		return nil, fmt.Errorf("open coordinator leases: %w", err)
	}
	if a.jobs, err = cluster.OpenJobs(ctx, js, cluster.DefaultJobBucket); err != nil {
		return nil, fmt.Errorf("open job registry: %w", err)
	}
	if err := claimWorkdir(cfg.Workdir, cfg.ID); err != nil {
		return nil, err
	}
	var localOpts []store.LocalOption
	if cfg.DirectWrites {
		localOpts = append(localOpts, store.WithDirectWrites())
	}
	if a.local, err = store.NewLocal(StateDir(cfg.Workdir), localOpts...); err != nil {
		return nil, fmt.Errorf("node state directory: %w", err)
	}
	// Before any task runs here: the local copy follows the store, and its
	// inventory goes out with the first heartbeat.
	if err := a.reconcileLocal(ctx); err != nil {
		a.local.Close()
		return nil, err
	}
	a.node = actors.NewNodeWithMetrics(a.log, cfg.Metrics)
	a.node.Metrics().WatchTransport(a.counters)
	a.node.Metrics().SetSource("members", membersCollector{a})
	a.remote = actors.NewRemote(cfg.ID, nc, a.counters, a.log)
	a.remote.SetFence(a.fence)
	a.node.AttachRemote(a.remote)
	// The settle period counts from here: the node hears the others from
	// now on (its start-up work above may have taken a while).
	listening := time.Now()
	a.mu.Lock()
	a.core.Listening(listening)
	a.mu.Unlock()
	if err := a.subscribe(); err != nil {
		a.Shutdown()
		return nil, err
	}
	a.hb.Store(cluster.StartHeartbeatSender(nc, cfg.HeartbeatTimeout/4, a.heartbeat, a.log))
	a.wg.Add(4)
	// The first tick at once: a restarted node takes back the jobs it
	// coordinated without waiting a tick (see coord.Core.JobRecords).
	go func() { a.tick(time.Now()); a.every(cfg.HeartbeatTimeout/6, a.tick) }()
	go a.every(ProbeEvery, a.probe)
	go a.every(cfg.HeartbeatTimeout/2, func(time.Time) { a.refreshHeld(context.Background()) })
	// Leases are renewed on their own goroutine: a slow takeover, placement
	// or prepare never delays a renewal.
	go a.every(cfg.HeartbeatTimeout/4, a.renewLeases)
	a.log.Info().Int("slots", cfg.Slots).Str("workdir", cfg.Workdir).Dur("settle", cfg.HeartbeatTimeout).Time("listening_since", listening).
		Msg("node started: learning the cluster's membership before placing or taking over jobs")
	return a, nil
}

// ID is the node's id.
func (a *Agent) ID() string { return a.cfg.ID }

// SlowConsumer fails the actor fed by the subscription on subject, whose
// messages NATS dropped, so the loss becomes a recovery.
func (a *Agent) SlowConsumer(subject string) { a.remote.SlowConsumer(subject) }

// subscribe listens for cluster requests and heartbeats.
func (a *Agent) subscribe() error {
	type sub struct {
		subject, queue string
		h              nats.MsgHandler
	}
	for _, s := range []sub{
		{SubmitSubject, SubmitQueue, a.onSubmit},
		{CmdSubject(a.cfg.ID), "", a.onNodeCmd},
		{StatusSubject, "", a.onStatus},
		{CancelSubject, "", a.onCancel},
		{RescaleSubject, "", a.onRescale},
		{PartDumpSubject(a.cfg.ID), "", a.onPartDump},
		{transport.NodeSubject("*", "leaving"), "", a.onLeaving},
		{PingSubject(a.cfg.ID), "", a.onPing},
	} {
		var ns *nats.Subscription
		var err error
		if s.queue != "" {
			ns, err = a.nc.QueueSubscribe(s.subject, s.queue, s.h)
		} else {
			ns, err = a.nc.Subscribe(s.subject, s.h)
		}
		if err != nil {
			return fmt.Errorf("subscribe %s: %w", s.subject, err)
		}
		a.subs = append(a.subs, ns)
	}
	hs, err := cluster.WatchHeartbeats(a.nc, a.onHeartbeat, func(subject string, err error) {
		a.counters.Malformed.Add(1)
		a.badLog.Event(a.log.Warn(), "bad heartbeat", time.Now()).Str("subject", subject).Err(err).Msg("bad heartbeat: dropped")
	})
	if err != nil {
		return fmt.Errorf("watch heartbeats: %w", err)
	}
	a.subs = append(a.subs, hs)
	if err := a.startProbes(); err != nil {
		return fmt.Errorf("probe answers: %w", err)
	}
	return a.nc.Flush()
}

// StateDir is where a node keeps its copy of checkpoint state.
func StateDir(workdir string) string { return workdir + "/state" }

// heartbeat is this node's heartbeat.
func (a *Agent) heartbeat() cluster.Heartbeat {
	a.mu.Lock()
	defer a.mu.Unlock()
	hb := cluster.Heartbeat{Node: a.cfg.ID, Slots: a.cfg.Slots, Used: a.node.Tasks(), StartedUnixNano: a.started.UnixNano(), Held: a.held}
	count := func(name string, j *actors.Job) {
		if n := min(j.LocalTasks(), hb.Used); n > 0 {
			if hb.Tasks == nil {
				hb.Tasks = map[string]int{}
			}
			hb.Tasks[name] = min(hb.Tasks[name]+n, hb.Used)
		}
	}
	restores := map[string][]actors.RestoreStats{}
	for name, j := range a.parts {
		hb.Jobs = append(hb.Jobs, name)
		count(name, j)
		restores[name] = append(restores[name], j.Restores())
	}
	for name, cj := range a.coord {
		hb.Coordinates = append(hb.Coordinates, name)
		count(name, cj.job)
		restores[name] = append(restores[name], cj.job.Restores())
	}
	hb.Restored = restoredStates(restores)
	sort.Strings(hb.Jobs)
	sort.Strings(hb.Coordinates)
	if a.core.IsLeaving() {
		hb.Slots = 0
	}
	return hb
}

// onHeartbeat hands another node's heartbeat to the core.
func (a *Agent) onHeartbeat(hb cluster.Heartbeat) {
	a.mu.Lock()
	acts := a.core.Heartbeat(time.Now(), hb)
	a.mu.Unlock()
	a.carryOut(acts, hb.Slots)
}

// onLeaving handles a node's announcement that it exits gracefully.
func (a *Agent) onLeaving(m *nats.Msg) {
	node, err := nodeOfLeaving(m.Subject)
	if err != nil {
		return
	}
	a.mu.Lock()
	acts := a.core.Leaving(node)
	a.mu.Unlock()
	a.carryOut(acts, 0)
}

// nodeOfLeaving reads the node id out of a leaving subject.
func nodeOfLeaving(subject string) (string, error) {
	s, err := transport.ParseSubject(subject)
	if err != nil {
		return "", err
	}
	return s.Node, nil
}

// every calls fn every d on the calling goroutine, one of the agent's, until
// the agent quits.
func (a *Agent) every(d time.Duration, fn func(now time.Time)) {
	defer a.wg.Done()
	tick := time.NewTicker(d)
	defer tick.Stop()
	for {
		select {
		case <-a.quit:
			return
		case now := <-tick.C:
			fn(now)
		}
	}
}

// tick is the agent's clock: the core declares silent nodes dead and asks
// for orphaned jobs to take over (the leases are renewed on a goroutine of
// their own, never behind this).
func (a *Agent) tick(now time.Time) {
	a.mu.Lock()
	acts := a.core.Tick(now)
	a.mu.Unlock()
	a.carryOut(acts, 0)
	a.publishProgress(now)
	a.rates.tick(now, a.localJobs())
}

// carryOut does what the core asked on a heartbeat, a leaving announcement
// or a tick (slots: the joining node's, for the log).
func (a *Agent) carryOut(acts []coord.Action, slots int) {
	for _, act := range acts {
		switch act.Kind {
		case coord.NodeLost:
			switch act.Reason {
			case coord.Silent:
				a.log.Warn().Str("peer", act.Node).Dur("timeout", a.cfg.HeartbeatTimeout).Msg("node silent: declared dead")
			case coord.ConnectionClosed:
				a.log.Warn().Str("peer", act.Node).Dur("grace", a.cfg.DisconnectGrace).Msg("node's connection to NATS closed: declared dead")
			case "leaving":
				a.log.Info().Str("peer", act.Node).Msg("node is leaving")
			default:
				a.log.Warn().Str("peer", act.Node).Dur("local_wait", a.cfg.LocalWait).
					Msgf("%s %s: placing its tasks elsewhere", act.Node, act.Reason)
			}
			a.announceLost(act)
			a.nodeGone(act.Node)
			if act.Reason != "leaving" {
				a.prewarm("peer lost")
			}
		case coord.AwaitNode:
			a.log.Warn().Str("peer", act.Node).Str("why", act.Reason).Dur("timeout", a.cfg.HeartbeatTimeout).Dur("local_wait", act.After).
				Msgf("%s declared dead (%s): waiting for %s to return", act.Node, act.Reason, act.Node)
			a.announceLost(act)
		case coord.NodeBack:
			a.log.Info().Str("peer", act.Node).Str("why", act.Reason).Msgf("%s returned: placing its tasks back", act.Node)
			a.prewarm("peer returned")
			a.wg.Add(1)
			go func(node string) {
				defer a.wg.Done()
				a.nodeBack(node)
			}(act.Node)
		case coord.NodeJoined:
			a.remote.NodeJoined(act.Node)
			a.log.Info().Str("peer", act.Node).Int("slots", slots).Msg("node joined")
			a.nodeJoined()
			if hb := a.hb.Load(); hb != nil && act.Node != a.cfg.ID {
				// The node that joined learns of this one now, not a
				// heartbeat period later (a restarted coordinator places
				// as soon as it heard every node holding the job's state).
				hb.Now()
			}
		case coord.ScanJobs:
			a.adoptOrphans()
		}
	}
}

// nodeGone tells the coordinators on this node that a node is gone.
func (a *Agent) nodeGone(node string) {
	a.remote.NodeLost(node)
	for _, cj := range a.coordJobs() {
		cj.job.NodeLost(node)
	}
}

// alive lists the live nodes (this one included), sorted by id.
func (a *Agent) alive() []cluster.Heartbeat {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.core.Alive()
}

// isAlive reports whether node is alive and not leaving.
func (a *Agent) isAlive(node string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.core.IsAlive(node)
}

// Shutdown leaves the cluster abruptly (Leave first to leave gracefully):
// it stops the agent's goroutines and the jobs' actors on this node, and
// waits for them. Idempotent.
func (a *Agent) Shutdown() {
	a.once.Do(func() {
		close(a.quit)
		if hb := a.hb.Load(); hb != nil {
			hb.Stop()
		}
		for _, s := range a.subs {
			_ = s.Unsubscribe()
		}
		a.wg.Wait()
		a.node.Shutdown()
		a.local.Close()
	})
}

// coordJobs lists the jobs this node coordinates.
func (a *Agent) coordJobs() []*coordJob {
	a.mu.Lock()
	defer a.mu.Unlock()
	jobs := make([]*coordJob, 0, len(a.coord))
	for _, cj := range a.coord {
		jobs = append(jobs, cj)
	}
	return jobs
}

// claim marks job as being set up here; false if it already is (or is
// coordinated here).
func (a *Agent) claim(job string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.core.Claim(job)
}

// unclaim ends a claim.
func (a *Agent) unclaim(job string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.core.Unclaim(job)
}
