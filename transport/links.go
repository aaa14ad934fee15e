package transport

import (
	"sort"
	"strings"
	"sync"
)

// Directions of a LinkValue.
const (
	Sent     = "sent"
	Received = "received"
)

// LinkCounters count the weir messages and payload bytes that went over
// NATS per link between two nodes, in each direction as this process saw
// them. Safe for concurrent use; the zero value is ready.
type LinkCounters struct {
	mu    sync.Mutex
	links map[linkKey]*linkCount
}

type linkKey struct{ dir, from, to string }

type linkCount struct{ msgs, bytes uint64 }

// LinkValue is one link's counts in one direction.
type LinkValue struct {
	Direction string `json:"direction"`
	From      string `json:"from_node"`
	To        string `json:"to_node"`
	Messages  uint64 `json:"messages"`
	Bytes     uint64 `json:"payload_bytes"`
}

// EndpointNode is the node of a sending endpoint ("n1/node/job-x/task" and
// "n1#events" → "n1").
func EndpointNode(endpoint string) string {
	if i := strings.IndexAny(endpoint, "/#"); i >= 0 {
		return endpoint[:i]
	}
	return endpoint
}

// Add counts one message of payload bytes in direction dir (Sent or
// Received) from node from to node to.
func (l *LinkCounters) Add(dir, from, to string, bytes int) {
	if l == nil {
		return
	}
	k := linkKey{dir, from, to}
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.links[k]
	if c == nil {
		if l.links == nil {
			l.links = map[linkKey]*linkCount{}
		}
		c = &linkCount{}
		l.links[k] = c
	}
	c.msgs++
	c.bytes += uint64(bytes)
}

// Snapshot lists every link's counts, sorted by direction, from and to.
func (l *LinkCounters) Snapshot() []LinkValue {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]LinkValue, 0, len(l.links))
	for k, c := range l.links {
		out = append(out, LinkValue{Direction: k.dir, From: k.from, To: k.to, Messages: c.msgs, Bytes: c.bytes})
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Direction != b.Direction {
			return a.Direction < b.Direction
		}
		if a.From != b.From {
			return a.From < b.From
		}
		return a.To < b.To
	})
	return out
}
