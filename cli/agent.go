package cli

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/weirstream/weir/actors"
	"github.com/weirstream/weir/cluster"
	"github.com/weirstream/weir/store"
	"github.com/weirstream/weir/transport"
)

// agentConfig is what `node start` hands the agent.
type agentConfig struct {
	ID               string
	Workdir          string
	Slots            int
	HeartbeatTimeout time.Duration
	PlacementTimeout time.Duration // how long a job that does not fit waits for slots
}

// agent is a long-running cluster node: it heartbeats, tracks the other
// nodes, runs parts of jobs for coordinators, coordinates the jobs submitted
// to it, and takes over the coordination of jobs whose coordinator died.
type agent struct {
	cfg      agentConfig
	reg      *registry
	log      zerolog.Logger
	nc       *nats.Conn
	js       jetstream.JetStream
	node     *actors.Node
	remote   *actors.Remote
	counters *transport.Counters
	pub      *transport.Publisher
	leases   *cluster.Leases
	jobs     *cluster.Jobs
	local    *store.Local
	started  time.Time
	fence    *lockedFence // highest coordinator epoch seen per job

	mu      sync.Mutex
	members *cluster.Members
	left    map[string]bool  // nodes that announced they are leaving
	seen    map[string]int64 // node → the incarnation (start time) last heard from
	coord   map[string]*coordJob
	busy    map[string]bool   // jobs being submitted or taken over here
	leased  map[string]bool   // jobs whose coordinator lease this node holds (renewed by renewLeases)
	placing map[string]string // jobs waiting to be placed here → why
	parts   map[string]*actors.Job
	leaving bool

	subs   []*nats.Subscription
	stopHB func()
	quit   chan struct{}
	wg     sync.WaitGroup
	once   sync.Once
}

// leavingSubject is where a node announces a graceful exit.
func leavingSubject(node string) string { return transport.NodeSubject(node, "leaving") }

// startAgent joins the cluster over nc. The caller owns nc.
func startAgent(ctx context.Context, reg *registry, cfg agentConfig, nc *nats.Conn, counters *transport.Counters, log zerolog.Logger) (*agent, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("jetstream: %w", err)
	}
	a := &agent{cfg: cfg, reg: reg, log: log, nc: nc, js: js, counters: counters, pub: transport.NewPublisher(nc), started: time.Now(),
		members: cluster.NewMembers(cfg.HeartbeatTimeout), left: map[string]bool{}, seen: map[string]int64{},
		coord: map[string]*coordJob{}, busy: map[string]bool{}, leased: map[string]bool{}, placing: map[string]string{},
		parts: map[string]*actors.Job{}, fence: &lockedFence{f: cluster.NewFence()}, quit: make(chan struct{})}
	if a.leases, err = cluster.OpenLeases(ctx, js, cluster.DefaultLeaseBucket); err != nil {
		return nil, fmt.Errorf("open coordinator leases: %w", err)
	}
	if a.jobs, err = cluster.OpenJobs(ctx, js, cluster.DefaultJobBucket); err != nil {
		return nil, fmt.Errorf("open job registry: %w", err)
	}
	if a.local, err = store.NewLocal(stateDir(cfg.Workdir)); err != nil {
		return nil, fmt.Errorf("node state directory: %w", err)
	}
	a.node = actors.NewNode(log)
	a.remote = actors.NewRemote(cfg.ID, nc, counters, log)
	a.remote.SetFence(a.fence)
	a.node.AttachRemote(a.remote)
	if err := a.subscribe(); err != nil {
		a.stop()
		return nil, err
	}
	a.stopHB = cluster.StartHeartbeats(nc, cfg.HeartbeatTimeout/4, a.heartbeat, log)
	a.wg.Add(2)
	go a.every(a.cfg.HeartbeatTimeout/6, a.tick)
	// Leases are renewed on their own goroutine: a slow takeover, placement
	// or prepare never delays a renewal.
	go a.every(a.cfg.HeartbeatTimeout/4, a.renewLeases)
	log.Info().Str("node", cfg.ID).Int("slots", cfg.Slots).Str("workdir", cfg.Workdir).Dur("settle", cfg.HeartbeatTimeout).
		Msg("node started: learning the cluster's membership before placing or taking over jobs")
	return a, nil
}

// subscribe listens for cluster requests and heartbeats.
func (a *agent) subscribe() error {
	type sub struct {
		subject, queue string
		h              nats.MsgHandler
	}
	for _, s := range []sub{
		{subjSubmit, submitQueue, a.onSubmit},
		{nodeCmdSubject(a.cfg.ID), "", a.onNodeCmd},
		{subjStatus, "", a.onStatus},
		{subjCancel, "", a.onCancel},
		{transport.NodeSubject("*", "leaving"), "", a.onLeaving},
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
		a.log.Warn().Str("subject", subject).Err(err).Msg("bad heartbeat: dropped")
	})
	if err != nil {
		return fmt.Errorf("watch heartbeats: %w", err)
	}
	a.subs = append(a.subs, hs)
	return a.nc.Flush()
}

// stateDir is where a node keeps its copy of checkpoint state.
func stateDir(workdir string) string { return workdir + "/state" }

// heartbeat is this node's heartbeat.
func (a *agent) heartbeat() cluster.Heartbeat {
	a.mu.Lock()
	defer a.mu.Unlock()
	hb := cluster.Heartbeat{Node: a.cfg.ID, Slots: a.cfg.Slots, Used: a.node.Tasks(), StartedUnixNano: a.started.UnixNano()}
	count := func(name string, j *actors.Job) {
		if n := min(j.LocalTasks(), hb.Used); n > 0 {
			if hb.Tasks == nil {
				hb.Tasks = map[string]int{}
			}
			hb.Tasks[name] = min(hb.Tasks[name]+n, hb.Used)
		}
	}
	for name, j := range a.parts {
		hb.Jobs = append(hb.Jobs, name)
		count(name, j)
	}
	for name, cj := range a.coord {
		hb.Coordinates = append(hb.Coordinates, name)
		count(name, cj.job)
	}
	sort.Strings(hb.Jobs)
	sort.Strings(hb.Coordinates)
	if a.leaving {
		hb.Slots = 0
	}
	return hb
}

// onHeartbeat records another node's heartbeat. A node that restarted
// (a new incarnation) before it was declared dead has lost the tasks it ran:
// that is handled as the old incarnation's death.
func (a *agent) onHeartbeat(hb cluster.Heartbeat) {
	a.mu.Lock()
	prev, known := a.seen[hb.Node]
	restarted := known && hb.StartedUnixNano > prev
	if !known || hb.StartedUnixNano > prev {
		a.seen[hb.Node] = hb.StartedUnixNano
	}
	joined := a.members.Observe(hb, time.Now())
	if joined {
		delete(a.left, hb.Node)
	}
	a.mu.Unlock()
	if restarted && hb.Node != a.cfg.ID {
		a.log.Warn().Str("peer", hb.Node).Msg("node restarted: the tasks it ran are lost")
		a.nodeGone(hb.Node)
	}
	if joined {
		a.remote.NodeJoined(hb.Node)
		a.log.Info().Str("peer", hb.Node).Int("slots", hb.Slots).Msg("node joined")
	}
}

// onLeaving handles a node's announcement that it exits gracefully.
func (a *agent) onLeaving(m *nats.Msg) {
	node, err := nodeOfLeaving(m.Subject)
	if err != nil || node == a.cfg.ID {
		return
	}
	a.mu.Lock()
	a.left[node] = true
	a.mu.Unlock()
	a.log.Info().Str("peer", node).Msg("node is leaving")
	a.nodeGone(node)
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
func (a *agent) every(d time.Duration, fn func(now time.Time)) {
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

// tick is the agent's clock: it declares silent nodes dead and takes over
// orphaned jobs (the leases are renewed on a goroutine of their own, never
// behind this).
func (a *agent) tick(now time.Time) {
	a.mu.Lock()
	dead := a.members.Tick(now)
	a.mu.Unlock()
	for _, node := range dead {
		a.log.Warn().Str("peer", node).Dur("timeout", a.cfg.HeartbeatTimeout).Msg("node silent: declared dead")
		a.nodeGone(node)
	}
	a.adoptOrphans(now)
	a.publishProgress(now)
}

// nodeGone tells the coordinators on this node that a node is gone.
func (a *agent) nodeGone(node string) {
	a.remote.NodeLost(node)
	for _, cj := range a.coordJobs() {
		cj.job.NodeLost(node)
	}
}

// alive lists the live nodes (this one included), sorted by id.
func (a *agent) alive() []cluster.Heartbeat {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []cluster.Heartbeat
	for _, hb := range a.members.Alive() {
		if !a.left[hb.Node] {
			out = append(out, hb)
		}
	}
	return out
}

// isAlive reports whether node is alive and not leaving.
func (a *agent) isAlive(node string) bool {
	for _, hb := range a.alive() {
		if hb.Node == node {
			return true
		}
	}
	return false
}

// stop leaves the cluster abruptly (the caller handles graceful leaving);
// idempotent.
func (a *agent) stop() {
	a.once.Do(func() {
		close(a.quit)
		if a.stopHB != nil {
			a.stopHB()
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
func (a *agent) coordJobs() []*coordJob {
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
func (a *agent) claim(job string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.busy[job] || a.coord[job] != nil {
		return false
	}
	a.busy[job] = true
	return true
}

// unclaim ends a claim.
func (a *agent) unclaim(job string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.busy, job)
}
