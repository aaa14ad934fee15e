package cluster

import (
	"errors"
	"fmt"
	"strings"

	"github.com/vmihailenco/msgpack/v5"
)

// HeartbeatWildcard is the subject that matches every node's heartbeats.
const HeartbeatWildcard = "weir.node.*.hb"

// Heartbeat is what a node announces about itself every few hundred
// milliseconds: msgpack on the wire, JSON in status output.
type Heartbeat struct {
	Node            string          `msgpack:"node" json:"node"`
	Slots           int             `msgpack:"slots" json:"slots"`
	Used            int             `msgpack:"used" json:"used"`
	Jobs            []string        `msgpack:"jobs,omitempty" json:"jobs,omitempty"`
	Tasks           map[string]int  `msgpack:"tasks,omitempty" json:"tasks,omitempty"`             // job → its tasks among Used
	Coordinates     []string        `msgpack:"coordinates,omitempty" json:"coordinates,omitempty"` // jobs this node coordinates
	Held            []HeldState     `msgpack:"held,omitempty" json:"held,omitempty"`               // local state on the node's disk, reported for placement
	Restored        []RestoredState `msgpack:"rst,omitempty" json:"restores,omitempty"`            // per job, the restores of its tasks on this node
	StartedUnixNano int64           `msgpack:"started" json:"started_unix_nano"`                   // when this incarnation of the node started
	SentUnixNano    int64           `msgpack:"sent" json:"sent_unix_nano"`
}

// HeldState is state of one operator of one job kept on a node's disk: which
// key-group ranges, as of which checkpoint.
type HeldState struct {
	Job        string   `msgpack:"job" json:"job"`
	Operator   string   `msgpack:"op" json:"operator"`
	Checkpoint uint64   `msgpack:"cp" json:"checkpoint"`
	KeyGroups  [][2]int `msgpack:"kg" json:"key_groups"` // ranges [first,last], inclusive
	// KeyGroupBytes is the size of the key-group sections in KeyGroups;
	// Bytes adds the operator's other sections (operator and channel state).
	KeyGroupBytes int64 `msgpack:"kgb,omitempty" json:"key_group_bytes"`
	Bytes         int64 `msgpack:"b,omitempty" json:"bytes"`
	// ChainBytes is the part of KeyGroupBytes in key groups stored
	// incrementally (store.LocalHolding.ChainBytes).
	ChainBytes int64 `msgpack:"kcb,omitempty" json:"chain_bytes,omitempty"`
}

// RestoredState sums the restores of one job's tasks on a node: how many,
// the bytes and sections read from the node's local copy and from the
// checkpoint store, the time they took until the task ran (summed over
// tasks) and the span from the start of the first to the end of the last
// (tasks restore side by side: how long until every task restored ran);
// and the same until every key group was decoded (a task runs before: it
// decodes key groups as it needs them and the rest in the background), of
// the restores that got there (Decoded).
type RestoredState struct {
	Job            string  `msgpack:"job" json:"job"`
	Restores       int     `msgpack:"n" json:"task_restores"`
	LocalBytes     int64   `msgpack:"lb,omitempty" json:"local_bytes"`
	RemoteBytes    int64   `msgpack:"rb,omitempty" json:"remote_bytes"`
	LocalSections  int     `msgpack:"ls,omitempty" json:"local_sections"`
	RemoteSections int     `msgpack:"rs,omitempty" json:"remote_sections"`
	TookMs         float64 `msgpack:"ms,omitempty" json:"took_ms"`
	SpanMs         float64 `msgpack:"sp,omitempty" json:"span_ms"`
	Decoded        int     `msgpack:"dn,omitempty" json:"decoded_restores"`
	DecodedMs      float64 `msgpack:"dms,omitempty" json:"decoded_ms"`
	DecodedSpanMs  float64 `msgpack:"dsp,omitempty" json:"decoded_span_ms"`
}

// check reports why r cannot be a restore summary: negative counts or
// time (or a time that is not a number).
func (r RestoredState) check() error {
	if r.Restores < 0 || r.LocalBytes < 0 || r.RemoteBytes < 0 || r.LocalSections < 0 || r.RemoteSections < 0 || !(r.TookMs >= 0) || !(r.SpanMs >= 0) ||
		r.Decoded < 0 || !(r.DecodedMs >= 0) || !(r.DecodedSpanMs >= 0) {
		return fmt.Errorf("job %s: negative restore counts (restores %d, bytes local %d remote %d, sections local %d remote %d, took %g ms, span %g ms, decoded %d in %g ms, span %g ms)",
			r.Job, r.Restores, r.LocalBytes, r.RemoteBytes, r.LocalSections, r.RemoteSections, r.TookMs, r.SpanMs, r.Decoded, r.DecodedMs, r.DecodedSpanMs)
	}
	return nil
}

// HeartbeatSubject is the subject node publishes its heartbeats on.
func HeartbeatSubject(node string) string { return "weir.node." + node + ".hb" }

// CheckNodeID reports why id cannot be a node id: node ids are one NATS
// subject token, so they must be non-empty and contain no '.', '*', '>' or
// white space.
func CheckNodeID(id string) error {
	if id == "" {
		return errors.New("node id is empty")
	}
	if strings.ContainsAny(id, ".*> \t\r\n") {
		return fmt.Errorf("node id %q: must not contain '.', '*', '>' or white space", id)
	}
	return nil
}

// nodeOfSubject returns the node token of a heartbeat subject.
func nodeOfSubject(subject string) (string, bool) {
	rest, ok := strings.CutPrefix(subject, "weir.node.")
	if !ok {
		return "", false
	}
	node, ok := strings.CutSuffix(rest, ".hb")
	if !ok || CheckNodeID(node) != nil {
		return "", false
	}
	return node, true
}

// EncodeHeartbeat encodes hb for the wire.
func EncodeHeartbeat(hb Heartbeat) ([]byte, error) {
	b, err := msgpack.Marshal(&hb)
	if err != nil {
		return nil, fmt.Errorf("encode heartbeat of %s: %w", hb.Node, err)
	}
	return b, nil
}

// DecodeHeartbeat decodes and checks a heartbeat from the wire. It returns
// an error, never panics, on malformed input.
func DecodeHeartbeat(b []byte) (Heartbeat, error) {
	var hb Heartbeat
	if err := msgpack.Unmarshal(b, &hb); err != nil {
		return Heartbeat{}, fmt.Errorf("decode heartbeat (%d bytes): %w", len(b), err)
	}
	if err := hb.check(); err != nil {
		return Heartbeat{}, fmt.Errorf("bad heartbeat: %w", err)
	}
	return hb, nil
}

// check validates the fields of a decoded heartbeat.
func (hb Heartbeat) check() error {
	if err := CheckNodeID(hb.Node); err != nil {
		return err
	}
	if hb.Slots < 0 || hb.Used < 0 {
		return fmt.Errorf("node %s: negative slots (%d) or used (%d)", hb.Node, hb.Slots, hb.Used)
	}
	for job, n := range hb.Tasks {
		if n < 0 || n > hb.Used {
			return fmt.Errorf("node %s: job %s: %d tasks, outside [0, used %d]", hb.Node, job, n, hb.Used)
		}
	}
	for _, h := range hb.Held {
		if h.Bytes < 0 || h.KeyGroupBytes < 0 || h.KeyGroupBytes > h.Bytes {
			return fmt.Errorf("node %s: job %s operator %s: bad byte counts (key groups %d, total %d)",
				hb.Node, h.Job, h.Operator, h.KeyGroupBytes, h.Bytes)
		}
		for _, r := range h.KeyGroups {
			if r[0] < 0 || r[1] < r[0] {
				return fmt.Errorf("node %s: job %s operator %s: bad key-group range [%d,%d]",
					hb.Node, h.Job, h.Operator, r[0], r[1])
			}
		}
	}
	for _, r := range hb.Restored {
		if err := r.check(); err != nil {
			return fmt.Errorf("node %s: %w", hb.Node, err)
		}
	}
	return nil
}
