// Package coord is the node agent's coordination core: a pure state
// machine, in the style of checkpoints.Coordinator, that takes the events a
// node sees (heartbeats, clock ticks, lease results, job records, placement
// and prepare results, nodes leaving) with a logical now and returns the
// actions the agent's shell carries out (NATS, the lease and job buckets,
// the actors). It has no goroutines, does no I/O and never reads the clock.
//
// What it decides: which nodes are alive (dead after a heartbeat timeout of
// silence; a new incarnation of a node means its tasks are lost, and they
// go back to it; with a local wait, a dead node's tasks wait for it to
// return before they go elsewhere; a node that announced leaving is gone),
// when a node has learned the membership
// (a settle period of one heartbeat timeout after it started; a job whose
// restore finds all its state held by live nodes is placed before it,
// and a restarted node takes back the jobs its earlier incarnation
// coordinated without waiting for it), which orphaned jobs it tries to adopt, whether it still holds a job's
// coordinator lease, abandoning a job whose lease was lost, waiting for a
// job to fit (with backoff, up to the placement timeout), the steps of
// setting a job up, and leaving the cluster.
package coord

import (
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/weirstream/weir/cluster"
	"github.com/weirstream/weir/cluster/placement"
)

// ErrLeaseLapsed is why a coordinator stops setting a job up: its lease
// lapsed or was taken over meanwhile.
var ErrLeaseLapsed = errors.New("coordinator lease lapsed: another node may coordinate the job")

// ErrUnreachable marks a prepare that no node answered (it is gone, or has
// not answered in time): the set-up waits and places the job again, on the
// nodes live then, instead of failing it.
var ErrUnreachable = errors.New("node did not answer")

// ErrStopping is why a set-up ends when the node stops.
var ErrStopping = errors.New("node stopping")

// Settling is why a job waits while its node is learning the membership.
const Settling = "learning the cluster's membership (the node has just started)"

// Config is a node's coordination configuration.
type Config struct {
	Self string
	// Boot is when this incarnation started (its heartbeats'
	// StartedUnixNano), on the clock the events' now is read from.
	Boot             time.Time
	HeartbeatTimeout time.Duration
	PlacementTimeout time.Duration
	// LocalWait is how long the tasks of a node that fell silent wait for
	// it to return before they are placed elsewhere (0: they do not wait).
	LocalWait time.Duration
	// DisconnectGrace is how long a node's connection to NATS must stay
	// closed (every probe answered "no responders", none answered by the
	// node) before it is declared dead (0: at the first such answer). A
	// connection that reconnects within it is no death.
	DisconnectGrace time.Duration
}

// Core is the coordination state of one node. It is not safe for
// concurrent use: the shell serialises the calls.
type Core struct {
	cfg     Config
	members *cluster.Members
	left    map[string]bool      // nodes that announced they are leaving
	seen    map[string]int64     // node → the incarnation last heard from
	leases  map[string]lease     // jobs whose coordinator lease this node holds
	claimed map[string]bool      // jobs being submitted or taken over here
	coord   map[string]bool      // jobs coordinated here
	setups  map[string]*setUp    // jobs being placed and prepared here
	awaited map[string]time.Time // silent nodes whose tasks wait for them → when they were declared dead
	gone    map[string]time.Time // live nodes whose connection was seen closed → since when (no probe answered since)
	closed  map[string]bool      // nodes declared dead because their connection closed
	leaving bool
	// ownScanned: the job registry was listed before the settle period
	// ended, for the jobs this node's earlier incarnation coordinated.
	ownScanned bool
	// listening is when the node began to hear the others (Listening); the
	// settle period counts from it. Boot until then.
	listening time.Time
}

// lease is a coordinator lease this node holds.
type lease struct {
	epoch   uint64
	renewed time.Time // when the last acquire or renewal that succeeded was sent
}

// setUp is a job being placed and prepared here.
type setUp struct {
	placing bool      // placement tries have begun (the settle period is over)
	start   time.Time // the first placement try
	attempt int       // failed placement tries
	waiting string    // why the job waits ("": it does not)
	prepare []string  // nodes still to prepare
}

// New returns the core of a node that has just started.
func New(cfg Config) *Core {
	return &Core{cfg: cfg, members: cluster.NewMembers(cfg.HeartbeatTimeout), left: map[string]bool{}, seen: map[string]int64{},
		leases: map[string]lease{}, claimed: map[string]bool{}, coord: map[string]bool{}, setups: map[string]*setUp{},
		awaited: map[string]time.Time{}, gone: map[string]time.Time{}, closed: map[string]bool{}, listening: cfg.Boot}
}

// Listening records when the node began to hear the others' heartbeats
// (its subscriptions are in place). The settle period counts from then: a
// node whose start-up work (reconciling its local copy) took a while has
// still heard the others for a whole heartbeat timeout when it settles.
func (c *Core) Listening(at time.Time) {
	if at.After(c.listening) {
		c.listening = at
	}
}

// Heartbeat takes a heartbeat received at now. A node that restarted (a new
// incarnation) has lost the tasks it ran; so has a node that returns after
// being declared dead. Either goes back to being placed on: its tasks
// return to it (NodeBack) unless they were placed elsewhere already, when
// it was declared dead without a local wait or the wait ran out.
func (c *Core) Heartbeat(now time.Time, hb cluster.Heartbeat) []Action {
	prev, known := c.seen[hb.Node]
	restarted := known && hb.StartedUnixNano > prev
	if known && hb.StartedUnixNano < prev {
		return nil // a late heartbeat of an old incarnation
	}
	// A node that was alive (and not leaving) when it restarted still had
	// its tasks: they are lost now.
	hadTasks := c.members.IsAlive(hb.Node) && !c.left[hb.Node]
	if !known || restarted {
		c.seen[hb.Node] = hb.StartedUnixNano
	}
	joined := c.members.Observe(hb, now)
	if joined {
		delete(c.left, hb.Node)
		delete(c.closed, hb.Node)
	}
	var out []Action
	if joined {
		out = append(out, Action{Kind: NodeJoined, Node: hb.Node})
	}
	if hb.Node == c.cfg.Self {
		return out
	}
	if lost, waiting := c.awaited[hb.Node]; waiting && (joined || restarted) {
		delete(c.awaited, hb.Node)
		why := fmt.Sprintf("returned after %v", now.Sub(lost).Round(time.Millisecond))
		if restarted {
			why += " as a new incarnation"
		}
		return append(out, Action{Kind: NodeBack, Node: hb.Node, Reason: why})
	}
	if restarted && hadTasks {
		out = append(out, Action{Kind: NodeBack, Node: hb.Node, Reason: "restarted before it was declared dead"})
	}
	return out
}

// Leaving takes another node's announcement that it exits gracefully.
func (c *Core) Leaving(node string) []Action {
	if node == c.cfg.Self {
		return nil
	}
	c.left[node] = true
	delete(c.awaited, node)
	delete(c.gone, node)
	return []Action{{Kind: NodeLost, Node: node, Reason: "leaving"}}
}

// Tick is the clock: nodes silent for longer than the heartbeat timeout are
// declared dead: their tasks are lost at once without a local wait, else
// they wait for the node to return, and are lost once the wait ran out.
// Once the node has settled (and is not leaving) the job registry is
// scanned for orphaned jobs; before that, once, for the jobs this node's
// earlier incarnation coordinated (see JobRecords).
func (c *Core) Tick(now time.Time) []Action {
	var out []Action
	for _, node := range c.members.Tick(now) {
		out = append(out, c.declaredDead(now, node, Silent))
	}
	nodes := make([]string, 0, len(c.awaited))
	for node := range c.awaited {
		nodes = append(nodes, node)
	}
	sort.Strings(nodes)
	for _, node := range nodes {
		if now.Sub(c.awaited[node]) >= c.cfg.LocalWait {
			delete(c.awaited, node)
			out = append(out, Action{Kind: NodeLost, Node: node, Reason: fmt.Sprintf("did not return within %v", c.cfg.LocalWait)})
		}
	}
	if !c.leaving && (c.settled(now) || !c.ownScanned) {
		out = append(out, Action{Kind: ScanJobs})
	}
	return out
}

// settled reports whether the node has run for a heartbeat timeout. Every
// live node heartbeats every quarter of that timeout, so by then this node
// has heard from every node the others count as alive; before it, a node
// that has just (re)started sees only itself and would place a whole job on
// its own slots, or take over jobs whose coordinator it has not heard yet.
func (c *Core) settled(now time.Time) bool {
	return now.Sub(c.listening) >= c.cfg.HeartbeatTimeout
}

// SettleLeft is how long until the node has run for a heartbeat timeout
// (see settled); 0 once it has.
func (c *Core) SettleLeft(now time.Time) time.Duration {
	return max(0, c.cfg.HeartbeatTimeout-now.Sub(c.listening))
}

// JobRecords takes the job registry's records, listed after a ScanJobs: a
// running job whose coordinator is dead (or is this node, restarted) is
// claimed here and its lease tried (the lease decides: one node wins).
// Before the settle period ends only the jobs whose coordinator is this node
// are: it is this node's earlier incarnation, dead whatever the node has
// heard so far (a job another node took over names that node, and a lease
// that node holds is not taken), where whether another coordinator lives
// is known only once every live node was heard.
func (c *Core) JobRecords(now time.Time, recs []cluster.JobRecord) []Action {
	if c.leaving {
		return nil
	}
	settled := c.settled(now)
	c.ownScanned = true
	var out []Action
	for _, rec := range recs {
		if rec.State != cluster.JobRunning {
			continue
		}
		if rec.Coordinator != c.cfg.Self && (!settled || c.IsAlive(rec.Coordinator)) {
			continue
		}
		if !c.Claim(rec.Name) {
			continue
		}
		act := Action{Kind: Acquire, Job: rec.Name, Reason: "old coordinator " + rec.Coordinator}
		if rec.Coordinator == c.cfg.Self {
			act.Reason += " (this node's earlier incarnation)"
		}
		if c.closed[rec.Coordinator] {
			// Its connection closed: its lease is taken over now, not
			// after it expires; the new epoch fences it.
			act.Node = rec.Coordinator
			act.Reason += " (" + ConnectionClosed + ")"
		}
		out = append(out, act)
	}
	return out
}

// Claim marks job as being set up here; false if it already is (or is
// coordinated here).
func (c *Core) Claim(job string) bool {
	if c.claimed[job] || c.coord[job] {
		return false
	}
	c.claimed[job] = true
	return true
}

// Unclaim ends a claim: the set-up is over, whichever way it ended.
func (c *Core) Unclaim(job string) {
	delete(c.claimed, job)
	delete(c.setups, job)
}

// Claimed reports whether job is being set up here.
func (c *Core) Claimed(job string) bool { return c.claimed[job] }

// LeaseAcquired takes the result of trying to acquire job's lease at now:
// won (at epoch) or held by holder.
func (c *Core) LeaseAcquired(now time.Time, job string, won bool, epoch uint64, holder string) Action {
	if !won {
		return Action{Kind: Drop, Job: job, Reason: "coordinated by node " + holder}
	}
	c.leases[job] = lease{epoch: epoch, renewed: now}
	return Action{Kind: Coordinate, Job: job, Epoch: epoch}
}

// Renewals asks for the renewal of every lease this node holds, by job.
func (c *Core) Renewals() []Action {
	jobs := make([]string, 0, len(c.leases))
	for job := range c.leases {
		jobs = append(jobs, job)
	}
	sort.Strings(jobs)
	out := make([]Action, 0, len(jobs))
	for _, job := range jobs {
		out = append(out, Action{Kind: Renew, Job: job})
	}
	return out
}

// LeaseRenewed takes the result of renewing job's lease, sent at sent. A
// lease whose renewal failed is forgotten: lost (another node wrote it), or
// of unknown revision after a failed write, so it can never be renewed
// again. The job, if coordinated here, is abandoned (another node takes it
// over); a set-up in progress stops at its next step.
func (c *Core) LeaseRenewed(sent time.Time, job string, err error) []Action {
	l, ok := c.leases[job]
	switch {
	case !ok:
		return nil
	case err == nil:
		l.renewed = sent
		c.leases[job] = l
		return nil
	}
	delete(c.leases, job)
	if !c.coord[job] {
		return nil
	}
	why := "coordinator lease lost"
	if !errors.Is(err, cluster.ErrLeaseLost) {
		why = "coordinator lease renewal failed: " + err.Error()
	}
	return []Action{{Kind: Abandon, Job: job, Reason: why}}
}

// Holds reports whether this node may still act as job's coordinator at
// now: its last acquire or renewal of the lease is within the heartbeat
// timeout, the time after which another node may take the lease over.
func (c *Core) Holds(now time.Time, job string) bool {
	l, ok := c.leases[job]
	return ok && cluster.HeldBy(cluster.LeaseValue{Node: c.cfg.Self, Epoch: l.epoch, RenewedUnixNano: l.renewed.UnixNano()},
		c.cfg.Self, now, c.cfg.HeartbeatTimeout)
}

// ForgetLease stops renewing job's lease (it was released, or may be
// another node's by now).
func (c *Core) ForgetLease(job string) { delete(c.leases, job) }

// AllHeld is why a job is placed before the settle period ends.
const AllHeld = "the live nodes hold all the state of the checkpoint to restore"

// TryPlace is the next placement try of job, being set up here: wait for
// the settle period, give up when the lease lapsed, or place. allHeld says
// that the live nodes heard so far hold all the state of the checkpoint the
// job restores from (every key group, and the operator and channel state):
// then the job is placed before the settle period ends (Reason AllHeld),
// since a node not heard yet holds nothing that waiting for it would place
// locally. The wait for the settle period is to be cut short by the shell
// when a node joins (another try may find all held).
func (c *Core) TryPlace(now time.Time, job string, allHeld bool) Action {
	s := c.setUp(job)
	early := false
	if !s.placing && !c.settled(now) {
		if !allHeld {
			s.waiting = Settling
			return Action{Kind: Wait, Job: job, After: c.listening.Add(c.cfg.HeartbeatTimeout).Sub(now), Reason: Settling}
		}
		early = true
	}
	if !s.placing {
		s.placing, s.start = true, now
	}
	if !c.Holds(now, job) {
		return Action{Kind: GiveUp, Job: job, Err: ErrLeaseLapsed}
	}
	if early {
		return Action{Kind: Place, Job: job, Reason: AllHeld}
	}
	return Action{Kind: Place, Job: job}
}

// Placed takes the result of a placement try of job at now: the nodes it
// uses, or why it failed. A job that does not fit waits, with backoff, for
// nodes to join or slots to free, and gives up after the placement timeout
// with the reason.
func (c *Core) Placed(now time.Time, job string, nodes []string, err error) Action {
	s := c.setUp(job)
	if err == nil {
		s.waiting = ""
		s.prepare = s.prepare[:0]
		for _, n := range nodes {
			if n != c.cfg.Self {
				s.prepare = append(s.prepare, n)
			}
		}
		a := c.next(now, job)
		a.Attempt = s.attempt + 1
		return a
	}
	if !placement.Waitable(err) {
		return Action{Kind: GiveUp, Job: job, Err: err}
	}
	wait := placement.Wait{Timeout: c.cfg.PlacementTimeout, First: c.cfg.HeartbeatTimeout / 4, Max: c.cfg.HeartbeatTimeout}
	d, giveUp := wait.Next(s.start, now, s.attempt)
	s.attempt++
	if giveUp {
		return Action{Kind: GiveUp, Job: job, Err: fmt.Errorf("%w (waited %v for nodes or free slots: --placement-timeout %v)",
			err, now.Sub(s.start).Round(time.Millisecond), c.cfg.PlacementTimeout)}
	}
	s.waiting = "free slots: " + err.Error()
	return Action{Kind: Wait, Job: job, After: d, Reason: s.waiting}
}

// Prepared takes node's answer to the prepare of its part of job. A node
// that did not answer (ErrUnreachable: it died since the membership was read,
// and is not declared dead yet) makes the set-up wait, with the placement's
// backoff and timeout, and then place the job again; any other error fails
// the set-up.
func (c *Core) Prepared(now time.Time, job, node string, err error) Action {
	s := c.setUp(job)
	if errors.Is(err, ErrUnreachable) {
		wait := placement.Wait{Timeout: c.cfg.PlacementTimeout, First: c.cfg.HeartbeatTimeout / 4, Max: c.cfg.HeartbeatTimeout}
		d, giveUp := wait.Next(s.start, now, s.attempt)
		s.attempt++
		if giveUp {
			return Action{Kind: GiveUp, Job: job, Err: fmt.Errorf("prepare node %s: %w (waited %v for the live nodes to answer: --placement-timeout %v)",
				node, err, now.Sub(s.start).Round(time.Millisecond), c.cfg.PlacementTimeout)}
		}
		s.waiting = fmt.Sprintf("node %s did not answer its prepare: placing again", node)
		return Action{Kind: Wait, Job: job, After: d, Reason: s.waiting}
	}
	if err != nil {
		return Action{Kind: GiveUp, Job: job, Err: fmt.Errorf("prepare node %s: %w", node, err)}
	}
	if len(s.prepare) > 0 && s.prepare[0] == node {
		s.prepare = s.prepare[1:]
	}
	return c.next(now, job)
}

// next is job's next set-up step after placement: prepare the next node,
// or deploy; give up when the lease lapsed.
func (c *Core) next(now time.Time, job string) Action {
	if !c.Holds(now, job) {
		return Action{Kind: GiveUp, Job: job, Err: ErrLeaseLapsed}
	}
	if s := c.setUp(job); len(s.prepare) > 0 {
		return Action{Kind: Prepare, Job: job, Node: s.prepare[0]}
	}
	return Action{Kind: Deploy, Job: job}
}

// setUp is job's set-up state, made on first use.
func (c *Core) setUp(job string) *setUp {
	s := c.setups[job]
	if s == nil {
		s = &setUp{}
		c.setups[job] = s
	}
	return s
}

// Coordinating records that job's coordinator runs here.
func (c *Core) Coordinating(job string) {
	c.coord[job] = true
	delete(c.setups, job)
}

// SetUpFailed takes the failure of job's set-up here: recorded (and the
// lease released) while the lease is held, else left to the next
// coordinator (the job may be another node's by now).
func (c *Core) SetUpFailed(now time.Time, job string, err error) Action {
	delete(c.setups, job)
	held := c.Holds(now, job)
	delete(c.leases, job)
	if !held || errors.Is(err, ErrStopping) {
		return Action{Kind: Forget, Job: job, Err: err}
	}
	return Action{Kind: Fail, Job: job, Err: err}
}

// Ended takes the end of job's coordinator here (abandoned: it stopped
// without the job ending). The end is recorded (and the lease released)
// only while the lease is held: after it lapsed another node may
// coordinate the job, and the record is its to write. A job to record stays
// claimed until the shell has written the record (Unclaim): a scan of the
// registry meanwhile still shows it running here and must not adopt it.
func (c *Core) Ended(now time.Time, job string, abandoned bool) Action {
	delete(c.coord, job)
	held := c.Holds(now, job)
	delete(c.leases, job)
	switch {
	case abandoned:
		return Action{Kind: Forget, Job: job}
	case !held:
		return Action{Kind: Forget, Job: job, Reason: "job ended after the coordinator lease lapsed: not recorded"}
	}
	c.claimed[job] = true
	return Action{Kind: Record, Job: job}
}

// Leave starts the node's graceful exit: the jobs it coordinates are handed
// over (their leases released), the other nodes are told, so they move this
// node's tasks elsewhere and take over those jobs at once instead of after
// a heartbeat timeout; then its own parts of jobs stop. From now on it
// adopts no jobs and offers no slots.
func (c *Core) Leave() []Action {
	c.leaving = true
	jobs := make([]string, 0, len(c.coord))
	for job := range c.coord {
		jobs = append(jobs, job)
	}
	sort.Strings(jobs)
	var out []Action
	for _, job := range jobs {
		delete(c.leases, job)
		out = append(out, Action{Kind: HandOver, Job: job, Reason: "node leaving"})
	}
	return append(out, Action{Kind: AnnounceLeaving}, Action{Kind: EndParts})
}

// IsLeaving reports whether the node is leaving.
func (c *Core) IsLeaving() bool { return c.leaving }

// Alive lists the live nodes that are not leaving (this one included once
// its heartbeat came back), sorted by id.
func (c *Core) Alive() []cluster.Heartbeat {
	var out []cluster.Heartbeat
	for _, hb := range c.members.Alive() {
		if !c.left[hb.Node] {
			out = append(out, hb)
		}
	}
	return out
}

// IsAlive reports whether node is alive and not leaving.
func (c *Core) IsAlive(node string) bool {
	for _, hb := range c.Alive() {
		if hb.Node == node {
			return true
		}
	}
	return false
}

// Awaited lists the silent nodes whose tasks wait for them to return, and
// since when.
func (c *Core) Awaited() map[string]time.Time {
	out := make(map[string]time.Time, len(c.awaited))
	for node, at := range c.awaited {
		out[node] = at
	}
	return out
}

// Members is the membership as heard, dead nodes included (for status).
func (c *Core) Members() *cluster.Members { return c.members }

// Waiting lists the jobs being set up here that wait, and why.
func (c *Core) Waiting() map[string]string {
	out := map[string]string{}
	for job, s := range c.setups {
		if s.waiting != "" && !c.coord[job] {
			out[job] = s.waiting
		}
	}
	return out
}
