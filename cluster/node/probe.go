package node

import (
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/weirstream/weir/cluster/coord"
	"github.com/weirstream/weir/transport"
)

// ProbeEvery is how often a node probes the connections of the nodes it
// watches (coord.Core.ProbeTargets).
const ProbeEvery = 50 * time.Millisecond

// probeAgain is how long a probe may stay unanswered before the node is
// probed again. A probe in flight when a node dies is never answered, so
// this adds itself to the detection of that death; a stopped node gets a
// probe this often rather than every ProbeEvery.
const probeAgain = 3 * ProbeEvery

// DefaultDisconnectGrace is how long, by default, a node's connection to
// NATS must stay closed before the node is declared dead: longer than a
// dropped connection takes to come back (nats.go reconnects at once, and
// resubscribes before it sends anything else), short of the time a restore
// takes to matter.
const DefaultDisconnectGrace = 200 * time.Millisecond

// PingSubject is where a node answers the probes of its connection.
func PingSubject(node string) string { return transport.NodeSubject(node, "ping") }

// prober probes other nodes' connections: a request on their PingSubject
// that NATS itself answers with "no responders" once the node's
// subscriptions, hence its connection, are gone. Answers come back on one
// inbox subscription; a probe that is not answered (a stopped or slow node)
// is simply not heard of again.
type prober struct {
	inbox string // answers come on inbox.<node>.<the probe's time, Unix nanoseconds>

	mu     sync.Mutex
	latest map[string]int64 // node → the time of the latest probe whose answer was taken
	sent   map[string]int64 // node → the time of the latest probe sent

	reconnects uint64 // the connection's reconnects seen (by the probe goroutine only)
}

// startProbes subscribes to the probes' answers.
func (a *Agent) startProbes() error {
	a.probes = &prober{inbox: a.nc.NewInbox(), latest: map[string]int64{}, sent: map[string]int64{}}
	sub, err := a.nc.Subscribe(a.probes.inbox+".*.*", a.onProbeAnswer)
	if err != nil {
		return err
	}
	a.subs = append(a.subs, sub)
	return nil
}

// onPing answers a probe of this node's connection.
func (a *Agent) onPing(m *nats.Msg) {
	if m.Reply != "" {
		_ = m.Respond(nil)
	}
}

// probe sends one probe, of time now (the clock tick's), to each node the
// core watches. The answer names the probe's time: the grace is counted in
// probe times, every ProbeEvery apart, not in answer arrivals, which jitter.
func (a *Agent) probe(now time.Time) {
	a.noteReconnects()
	a.mu.Lock()
	targets := a.core.ProbeTargets()
	a.mu.Unlock()
	for _, node := range targets {
		if !a.probes.due(node, now, probeAgain) {
			continue
		}
		reply := a.probes.inbox + "." + node + "." + strconv.FormatInt(now.UnixNano(), 10)
		if err := a.nc.PublishRequest(PingSubject(node), reply, nil); err != nil {
			a.badLog.Event(a.log.Warn(), "probe", time.Now()).Err(err).Str("peer", node).Msg("probe not sent")
		}
	}
}

// due reports whether node is to be probed at now, and if so notes the
// probe: not while an earlier probe is unanswered (a stopped or slow node
// is not sent a probe every tick to answer all at once when it resumes),
// unless that probe is older than again.
func (p *prober) due(node string, now time.Time, again time.Duration) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	last := p.sent[node]
	if last > p.latest[node] && now.Sub(time.Unix(0, last)) < again {
		return false
	}
	p.sent[node] = now.UnixNano()
	return true
}

// onProbeAnswer hands the answer to a probe to the core, at the probe's
// time: "no responders" from NATS (the node's connection is gone) or the
// node's own answer. An answer to a probe older than one already answered
// for the same node is dropped.
func (a *Agent) onProbeAnswer(m *nats.Msg) {
	rest, ok := strings.CutPrefix(m.Subject, a.probes.inbox+".")
	if !ok {
		return
	}
	node, sentText, ok := strings.Cut(rest, ".")
	sent, err := strconv.ParseInt(sentText, 10, 64)
	if !ok || err != nil {
		return
	}
	a.probes.mu.Lock()
	stale := sent <= a.probes.latest[node]
	if !stale {
		a.probes.latest[node] = sent
	}
	a.probes.mu.Unlock()
	if stale {
		return
	}
	if len(m.Data) == 0 && m.Header.Get("Status") == "503" {
		a.mu.Lock()
		acts := a.core.ConnGone(time.Unix(0, sent), node)
		a.mu.Unlock()
		a.carryOut(acts, 0)
		return
	}
	a.mu.Lock()
	a.core.ConnAnswered(node)
	a.mu.Unlock()
}

// announceLost publishes that this node declared act.Node dead.
func (a *Agent) announceLost(act coord.Action) {
	n := NodeLostNotice{Node: act.Node, Reason: act.Reason, By: a.cfg.ID}
	if err := a.nc.Publish(LostSubject(a.cfg.ID), Encode(n)); err != nil {
		a.log.Warn().Err(err).Str("peer", act.Node).Msg("announce a node declared dead")
	}
}

// noteReconnects fails this node's parts of jobs when its own connection to
// NATS dropped and came back since the last look (see
// actors.Remote.Reconnected): the jobs recover at once rather than wait for a
// message lost meanwhile.
func (a *Agent) noteReconnects() {
	n := a.nc.Stats().Reconnects
	if n == a.probes.reconnects {
		return
	}
	a.probes.reconnects = n
	a.log.Warn().Uint64("reconnects", n).Msg("reconnected to NATS: failing this node's tasks, messages to them may be lost")
	a.remote.Reconnected()
}
