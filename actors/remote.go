package actors

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"

	"github.com/weirstream/weir/internal/ratelimit"
	"github.com/weirstream/weir/transport"
)

// Remote is a node's link to the other nodes of a cluster. A message for an
// actor on another node goes to a local stand-in (a proxy actor), which
// publishes it on the actor's NATS subject; what arrives on this node's
// subjects is decoded and delivered to the local actor it names. Tasks,
// channels and coordinators keep talking to PIDs and never see NATS.
type Remote struct {
	node     string
	nc       *nats.Conn
	pub      *transport.Publisher
	log      zerolog.Logger
	counters *transport.Counters
	badLog   ratelimit.Log // warnings about bad input, rate-limited
	sys      *actor.ActorSystem

	mu       sync.Mutex
	proxies  map[refKey]proxyEntry // (node, actor id) → stand-in on this node
	targets  map[string]WireRef    // stand-in actor id → the actor it stands for
	local    map[string]WireRef    // local actor id → how other nodes address it
	jobs     map[string]*Job       // jobs with a part on this node
	recv     *recvLinks            // sequence checks of the links into this node
	epochs   map[string]int        // local actor id → how often it was registered
	restored map[string]bool       // local actor ids registered restored from a checkpoint
	lost     map[string]bool       // nodes declared dead
	joinGen  map[string]int        // node seen joining → link generation since it last joined again (see linkGen)
	owners   map[string]*actor.PID // subscribed subject → the local actor it feeds
	fence    Fence                 // nil: messages are not fenced
	fenced   map[fencedKey]bool    // refusals already logged
}

// Fence decides whether a message of a job stamped with a coordinator epoch
// is admitted (cluster.Fence behind a lock). It is asked from several
// goroutines.
type Fence interface {
	Admit(job string, epoch uint64) (ok bool, highest uint64)
}

// fencedKey is one refused sender and epoch, logged once.
type fencedKey struct {
	job, from string
	epoch     uint64
}

// refKey names an actor anywhere in the cluster.
type refKey struct{ node, id string }

// proxyEntry is a stand-in and the run of the job it speaks for.
type proxyEntry struct {
	pid *actor.PID
	job *Job
}

// WireRef is how an actor is named on the wire: its node, its actor id there,
// and what it is (which decides the subjects messages to it travel on).
type WireRef struct {
	Node     string `msgpack:"node"`
	ID       string `msgpack:"id"`
	Kind     string `msgpack:"kind"` // refTask, refChannel or refJob
	Op       int    `msgpack:"op,omitempty"`
	Instance int    `msgpack:"instance,omitempty"`
	Edge     int    `msgpack:"edge,omitempty"` // channel: edge id and producer → consumer instances
	From     int    `msgpack:"from,omitempty"`
	To       int    `msgpack:"to,omitempty"`
}

// Kinds of WireRef.
const (
	refTask    = "task"
	refChannel = "channel"
	refJob     = "job"
)

// NewRemote links node id to the cluster over nc. counters collects bad
// input seen on the wire (shown by `node status`).
func NewRemote(node string, nc *nats.Conn, counters *transport.Counters, log zerolog.Logger) *Remote {
	return &Remote{node: node, nc: nc, pub: transport.NewPublisher(nc), log: log, counters: counters,
		proxies: map[refKey]proxyEntry{}, targets: map[string]WireRef{}, local: map[string]WireRef{}, jobs: map[string]*Job{},
		recv: newRecvLinks(), epochs: map[string]int{}, restored: map[string]bool{}, lost: map[string]bool{},
		joinGen: map[string]int{},
		owners:  map[string]*actor.PID{}, fenced: map[fencedKey]bool{}}
}

// SetFence makes the remote refuse messages of a job from a coordinator
// epoch lower than the highest f has seen. Call it before any job starts.
func (r *Remote) SetFence(f Fence) { r.fence = f }

// admit asks the fence about a received message of job j stamped with
// epoch, and logs a refusal once per job, sender and epoch.
func (r *Remote) admit(j *Job, subject string, e *transport.Envelope, epoch uint64) bool {
	if r.fence == nil || j.opts.Cluster == nil {
		return true
	}
	ok, highest := r.fence.Admit(e.Job, epoch)
	if ok {
		return true
	}
	if epoch == 0 {
		// Every part of a cluster job stamps its messages: bad input.
		r.bad(subject, fmt.Errorf("message of job %s from %s without a coordinator epoch", e.Job, e.From))
		return false
	}
	node, _, _ := strings.Cut(e.From, "/")
	key := fencedKey{job: e.Job, from: node, epoch: epoch}
	r.mu.Lock()
	first := !r.fenced[key]
	r.fenced[key] = true
	r.mu.Unlock()
	if first {
		r.log.Warn().Str("job", e.Job).Str("from", e.From).Str("subject", subject).Uint64("epoch", epoch).
			Uint64("highest_epoch", highest).Msg("message from a replaced coordinator's epoch refused (fenced); further ones from this node are dropped quietly")
	}
	return false
}

// attach binds the remote to the node's actor system.
func (r *Remote) attach(sys *actor.ActorSystem) { r.sys = sys }

// addJob makes job's messages decodable on this node.
func (r *Remote) addJob(j *Job) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.jobs[j.Plan.Name] = j
}

// removeJob forgets job j: its messages are no longer delivered here and its
// stand-ins stop without telling their targets. A later run of the same
// name registered since stays.
func (r *Remote) removeJob(j *Job) {
	r.mu.Lock()
	if r.jobs[j.Plan.Name] == j {
		delete(r.jobs, j.Plan.Name)
	}
	r.mu.Unlock()
}

// job returns the job named name, if it has a part on this node.
func (r *Remote) job(name string) (*Job, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	j, ok := r.jobs[name]
	return j, ok
}

// register makes a local actor addressable from other nodes.
func (r *Remote) register(pid *actor.PID, ref WireRef) {
	ref.Node, ref.ID = r.node, pid.Id
	r.mu.Lock()
	defer r.mu.Unlock()
	r.local[pid.Id] = ref
	r.epochs[pid.Id]++
}

// checkSeq classifies a received message on its link (mu held).
func (r *Remote) checkSeq(e *transport.Envelope) transport.Verdict {
	return r.recv.check(transport.LinkKey(e.From, e.To), r.epochs[e.To], r.restored[e.To], e.Gen, e.Seq)
}

// unregister forgets a local actor.
func (r *Remote) unregister(pid *actor.PID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.local, pid.Id)
}

// refOf names pid for another node: a stand-in names its target, a local
// actor names itself.
func (r *Remote) refOf(pid *actor.PID) WireRef {
	if pid == nil {
		return WireRef{}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if ref, ok := r.local[pid.Id]; ok {
		return ref
	}
	if ref, ok := r.targets[pid.Id]; ok {
		return ref
	}
	return WireRef{Node: r.node, ID: pid.Id}
}

// resolve turns a ref in a message of job j into a PID on this node: the
// actor itself when it lives here, otherwise j's stand-in for it (spawned on
// first use; a stand-in of another run of the job is not shared).
func (r *Remote) resolve(j *Job, ref WireRef) *actor.PID {
	if ref.ID == "" {
		return nil
	}
	if ref.Node == r.node {
		return actor.NewPID(r.sys.Address(), ref.ID)
	}
	key := refKey{ref.Node, ref.ID}
	r.mu.Lock()
	e, ok := r.proxies[key]
	r.mu.Unlock()
	if ok && e.job == j {
		return e.pid
	}
	p := newProxy(r, j, ref, nil)
	props := proxyProps(p)
	name := fmt.Sprintf("remote/%s/%s", ref.Node, ref.ID)
	pid, err := r.sys.Root.SpawnNamed(props, name)
	if errors.Is(err, actor.ErrNameExists) {
		// Spawned concurrently by another message: use that one.
		r.mu.Lock()
		e, ok := r.proxies[key]
		r.mu.Unlock()
		if ok && e.job == j {
			return e.pid
		}
		// Or a stand-in of an earlier run of a job with the same name
		// that is still stopping: this one gets a name of its own.
		pid, err = r.sys.Root.SpawnNamed(props, fmt.Sprintf("%s#%d", name, stamp()))
	}
	if err != nil {
		r.log.Error().Err(err).Str("peer", ref.Node).Str("actor", ref.ID).Msg("spawn stand-in")
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if old, ok := r.proxies[key]; ok {
		if old.job == j {
			r.sys.Root.Send(pid, &quietStopMsg{})
			return old.pid
		}
		// A stand-in of an earlier run of the job, which j replaced
		// here: it stops without telling its target.
		r.sys.Root.Send(old.pid, &quietStopMsg{})
	}
	r.proxies[key] = proxyEntry{pid: pid, job: j}
	r.targets[pid.Id] = ref
	return pid
}

// addProxy records a stand-in (task stand-ins register themselves).
func (r *Remote) addProxy(job *Job, ref WireRef, pid *actor.PID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.proxies[refKey{ref.Node, ref.ID}] = proxyEntry{pid: pid, job: job}
	r.targets[pid.Id] = ref
}

// dropProxy forgets a stand-in that stopped.
func (r *Remote) dropProxy(ref WireRef, pid *actor.PID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	key := refKey{ref.Node, ref.ID}
	if cur, ok := r.proxies[key]; ok && cur.pid.Equal(pid) {
		delete(r.proxies, key)
	}
	if t, ok := r.targets[pid.Id]; ok && t == ref {
		delete(r.targets, pid.Id)
	}
}

// stopProxies stops, without telling their targets, the stand-ins that
// speak for job (not those of another run of the same name), and returns
// once they have stopped (each waited for up to 10 s). A stand-in first
// forwards what was posted to it before the stop. Waiting for that means
// no stand-in of the run publishes once the run is over here, not even
// under a later run of the same name registered meanwhile (which makes
// sends possible again): receivers take the first message on a link to a
// re-registered actor as the link's start, so a late credit of the
// earlier run would count as the later run's.
func (r *Remote) stopProxies(job *Job) {
	r.mu.Lock()
	var pids []*actor.PID
	for k, e := range r.proxies {
		if e.job == job {
			pids = append(pids, e.pid)
			delete(r.proxies, k)
		}
	}
	r.mu.Unlock()
	stopped := make([]*actor.Future, len(pids))
	for i, pid := range pids {
		r.sys.Root.Send(pid, &quietStopMsg{})
		// Watches it (a stand-in already gone answers at once) and
		// stops it after what is queued, the quiet stop first: the pill
		// itself then goes to no one.
		stopped[i] = r.sys.Root.PoisonFuture(pid)
	}
	for i, f := range stopped {
		if err := f.Wait(); err != nil {
			r.log.Warn().Err(err).Str("job", job.Plan.Name).Str("stand_in", pids[i].Id).
				Msg("a stand-in of the job did not stop in time: going on without it")
		}
	}
}

// NodeLost marks a node dead: stand-ins for its actors stop waiting for it.
func (r *Remote) NodeLost(node string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lost[node] = true
}

// NodeJoined clears a node's dead mark (it came back). A node seen before
// (back after being declared dead, or a new incarnation) has every link to
// it start at a new generation (see linkGen): a new incarnation's receivers
// expect each link to start at 1, and the same one back after being cut off
// must read what is still in flight of the old generation as stale. A node
// seen for the first time keeps its links as they are: this node may have
// sent to it already (a coordinator can place tasks here before this node
// hears the coordinator's heartbeat), and moving a live link to a new
// generation would forgive a loss on it.
func (r *Remote) NodeJoined(node string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.lost, node)
	if _, seen := r.joinGen[node]; seen {
		r.joinGen[node] = stamp()
	} else {
		r.joinGen[node] = 0
	}
}

// linkGen is the generation of a link to node of a sender of generation gen:
// the higher of gen and the node's generation since it last joined.
func (r *Remote) linkGen(node string, gen int) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return max(gen, r.joinGen[node])
}

// isLost reports whether node was declared dead.
func (r *Remote) isLost(node string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lost[node]
}

// listen subscribes to subject and delivers what arrives to local actors of
// job; owner is the actor that fails when the subscription loses messages
// (see SlowConsumer). The returned function unsubscribes.
func (r *Remote) listen(job, subject string, owner *actor.PID) (func(), error) {
	// Buffer payloads are not walked on arrival: dispatch decodes them with
	// bounds-checked decoders before anything acts on them.
	only := ownerOnly(subject, owner)
	sub, err := transport.SubscribeUnwalked(r.nc, subject, func(e *transport.Envelope) {
		if only == "" || e.To == only {
			r.dispatch(job, subject, e)
		}
	}, func(subj string, err error) { r.bad(subj, err) })
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", subject, err)
	}
	r.mu.Lock()
	r.owners[subject] = owner
	r.mu.Unlock()
	return func() {
		_ = sub.Unsubscribe()
		r.mu.Lock()
		if cur := r.owners[subject]; cur != nil && cur.Equal(owner) {
			delete(r.owners, subject)
		}
		r.mu.Unlock()
	}, nil
}

// SlowConsumer reports that NATS dropped messages of the subscription to
// subject (the client could not keep up): its owner fails, so the messages
// lost are recovered from the latest checkpoint instead of missed.
func (r *Remote) SlowConsumer(subject string) {
	r.mu.Lock()
	owner := r.owners[subject]
	r.mu.Unlock()
	if owner == nil {
		return
	}
	r.sys.Root.Send(owner, &linkFailedMsg{reason: "slow consumer on " + subject + ": NATS dropped messages"})
}

// Reconnected reports that the node's connection to NATS dropped and came
// back: messages sent to it meanwhile are lost, and a lost message that no
// later one follows is never seen as a gap. Every subscription's owner
// fails (a job's part fails its tasks, a coordinator all of them), so the
// jobs recover from the latest checkpoint instead of waiting for it.
func (r *Remote) Reconnected() {
	r.mu.Lock()
	owners := make(map[string]*actor.PID, len(r.owners))
	for _, pid := range r.owners {
		owners[pid.Id] = pid
	}
	r.mu.Unlock()
	for _, pid := range owners {
		r.sys.Root.Send(pid, &linkFailedMsg{reason: "the node's connection to NATS dropped: messages to it may be lost"})
	}
}

// bad logs and counts a message that could not be decoded.
func (r *Remote) bad(subject string, err error) {
	r.counters.CountBad(subject, err)
	r.badLog.Event(r.log.Warn(), "bad message", time.Now()).Str("subject", subject).Err(err).Msg("bad message on the wire: dropped")
}

// publish sends one envelope to node toNode, counting it on that link.
func (r *Remote) publish(subject, toNode string, e *transport.Envelope) error {
	if err := r.pub.Publish(subject, e); err != nil {
		return err
	}
	r.counters.Links.Add(transport.Sent, r.node, toNode, len(e.Payload))
	return nil
}

// stamp makes incarnation numbers for stand-ins and spawn requests: unique
// and increasing, also across restarts of this process.
func stamp() int { return int(time.Now().UnixNano()) }
