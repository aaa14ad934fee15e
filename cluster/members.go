package cluster

import (
	"sort"
	"time"
)

// Members is a pure state machine of which nodes are alive, fed with
// heartbeats and clock ticks. A node is alive from its first heartbeat until
// no heartbeat arrived for longer than the timeout. Time is the receiver's
// clock, passed in; the sender's clock is only used to order heartbeats of
// one node. Members is not safe for concurrent use.
type Members struct {
	timeout time.Duration
	nodes   map[string]*member
}

// member is what Members knows of one node.
type member struct {
	hb   Heartbeat // latest heartbeat
	seen time.Time // when it arrived
	dead bool      // reported dead by Tick, no heartbeat since
}

// NewMembers returns an empty membership in which a node is dead after
// timeout without a heartbeat.
func NewMembers(timeout time.Duration) *Members {
	return &Members{timeout: timeout, nodes: make(map[string]*member)}
}

// Observe records a heartbeat received at now. joined is true when the node
// was unknown, had been reported dead, or restarted (a later
// StartedUnixNano: the tasks of its previous incarnation are gone). A
// heartbeat older than the latest one of the same node (an earlier
// incarnation, or an earlier SentUnixNano) is ignored.
func (m *Members) Observe(hb Heartbeat, now time.Time) (joined bool) {
	cur, ok := m.nodes[hb.Node]
	if !ok {
		m.nodes[hb.Node] = &member{hb: hb, seen: now}
		return true
	}
	switch {
	case hb.StartedUnixNano < cur.hb.StartedUnixNano:
		return false // delayed heartbeat of a previous incarnation
	case hb.StartedUnixNano == cur.hb.StartedUnixNano && hb.SentUnixNano < cur.hb.SentUnixNano:
		return false // reordered
	}
	joined = cur.dead || hb.StartedUnixNano != cur.hb.StartedUnixNano
	cur.hb, cur.seen, cur.dead = hb, now, false
	return joined
}

// Tick declares dead the nodes without a heartbeat for longer than the
// timeout at now, and returns them sorted. Each dead node is reported once,
// until it heartbeats again.
func (m *Members) Tick(now time.Time) (dead []string) {
	for id, n := range m.nodes {
		if !n.dead && now.Sub(n.seen) > m.timeout {
			n.dead = true
			dead = append(dead, id)
		}
	}
	sort.Strings(dead)
	return dead
}

// Lose declares node dead at once (its connection to NATS closed): the
// caller learned it by other means than silence. It reports whether the
// node was alive. The node is alive again from its next heartbeat.
func (m *Members) Lose(node string) bool {
	n, ok := m.nodes[node]
	if !ok || n.dead {
		return false
	}
	n.dead = true
	return true
}

// Latest is node's latest heartbeat, alive or dead; false when it never
// sent one.
func (m *Members) Latest(node string) (Heartbeat, bool) {
	n, ok := m.nodes[node]
	if !ok {
		return Heartbeat{}, false
	}
	return n.hb, true
}

// Alive returns the latest heartbeat of each node not reported dead, sorted
// by node id.
func (m *Members) Alive() []Heartbeat {
	out := make([]Heartbeat, 0, len(m.nodes))
	for _, n := range m.nodes {
		if !n.dead {
			out = append(out, n.hb)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Node < out[j].Node })
	return out
}

// Age is the time since node's last heartbeat, alive or dead; false when
// the node never sent one.
func (m *Members) Age(node string, now time.Time) (time.Duration, bool) {
	n, ok := m.nodes[node]
	if !ok {
		return 0, false
	}
	return now.Sub(n.seen), true
}

// IsAlive reports whether node has heartbeated and is not reported dead.
func (m *Members) IsAlive(node string) bool {
	n, ok := m.nodes[node]
	return ok && !n.dead
}

// MemberAge is a known node's heartbeat age and whether it was reported dead.
type MemberAge struct {
	Node string
	Age  time.Duration
	Dead bool
}

// Ages lists every node that ever heartbeated, alive or dead, with the time
// since its last heartbeat at now, sorted by node id.
func (m *Members) Ages(now time.Time) []MemberAge {
	out := make([]MemberAge, 0, len(m.nodes))
	for id, n := range m.nodes {
		out = append(out, MemberAge{Node: id, Age: now.Sub(n.seen), Dead: n.dead})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Node < out[j].Node })
	return out
}
