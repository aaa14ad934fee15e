package coord

import (
	"sort"
	"time"
)

// Why a node is declared dead (NodeLost's and AwaitNode's Reason).
const (
	// Silent: no heartbeat for longer than the heartbeat timeout (a
	// partition, a stopped process, a node that died without its
	// connection closing).
	Silent = "silent"
	// ConnectionClosed: its connection to NATS closed (the process died, or
	// the connection dropped) and did not come back within the grace.
	ConnectionClosed = "connection closed"
)

// ProbeTargets lists the live nodes whose connection this node probes: every
// other node while it coordinates or sets up a job (its tasks may run
// there), else the nodes that coordinate jobs (this node may take them
// over). Sorted by id.
func (c *Core) ProbeTargets() []string {
	all := len(c.coord) > 0 || len(c.claimed) > 0
	var out []string
	for _, hb := range c.Alive() {
		if hb.Node != c.cfg.Self && (all || len(hb.Coordinates) > 0) {
			out = append(out, hb.Node)
		}
	}
	sort.Strings(out)
	return out
}

// ConnGone takes a probe of node answered at now by NATS itself with "no
// responders": the node's subscriptions, hence its connection, are gone.
// Once that has lasted DisconnectGrace without the node answering a probe
// (ConnAnswered), the node is declared dead: as for silence, and the jobs
// it coordinated are taken over at once (ScanJobs; their leases are taken
// over without waiting for them to expire). A probe that times out is no
// input at all: a stopped or slow node keeps its connection, and only
// silence declares it dead.
func (c *Core) ConnGone(now time.Time, node string) []Action {
	if node == c.cfg.Self || c.left[node] || !c.members.IsAlive(node) {
		return nil
	}
	since, ok := c.gone[node]
	if !ok {
		c.gone[node], since = now, now
	}
	if now.Sub(since) < c.cfg.DisconnectGrace {
		return nil
	}
	hb, _ := c.members.Latest(node)
	c.members.Lose(node)
	c.closed[node] = true
	out := []Action{c.declaredDead(now, node, ConnectionClosed)}
	if len(hb.Coordinates) > 0 && !c.leaving && c.settled(now) {
		out = append(out, Action{Kind: ScanJobs})
	}
	return out
}

// ConnAnswered takes node's answer to a probe: its connection is there (it
// reconnected, if it had closed).
func (c *Core) ConnAnswered(node string) { delete(c.gone, node) }

// declaredDead is what follows node's death at now: its tasks are lost at
// once without a local wait, else they wait for it to return.
func (c *Core) declaredDead(now time.Time, node, why string) Action {
	delete(c.gone, node)
	if c.cfg.LocalWait <= 0 || c.left[node] || node == c.cfg.Self {
		return Action{Kind: NodeLost, Node: node, Reason: why}
	}
	c.awaited[node] = now
	return Action{Kind: AwaitNode, Node: node, After: c.cfg.LocalWait, Reason: why}
}
