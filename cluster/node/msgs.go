package node

import (
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/weirstream/weir/cluster"
	"github.com/weirstream/weir/transport"
)

// Cluster-wide request subjects (msgpack bodies, readable with `node inspect`).
const (
	// SubmitSubject takes job submissions; one node (queue group) coordinates.
	SubmitSubject = "weir.cluster.submit"
	// StatusSubject asks every node for its status.
	StatusSubject = "weir.cluster.status"
	// CancelSubject asks the coordinator of a job to stop it.
	CancelSubject = "weir.cluster.cancel"
	// SubmitQueue is the queue group of SubmitSubject.
	SubmitQueue = "weir-submit"
)

// CmdSubject is where a node takes requests addressed to it alone.
func CmdSubject(node string) string { return transport.NodeSubject(node, "cmd") }

// EventsSubject is where a job's coordinator publishes progress and the end.
func EventsSubject(job string) string { return "weir." + job + ".events" }

// ResumedSubject is where a job's coordinator publishes the moment the job
// runs (a JobEvent with Resumed set; the counts are not filled in).
func ResumedSubject(job string) string { return "weir." + job + ".resumed" }

// LostSubject is where node announces that it declared another node dead.
func LostSubject(node string) string { return transport.NodeSubject(node, "lost") }

// NodeLostNotice is what a node announces on its LostSubject when it
// declares another node dead (for tools and `node bench cluster`).
type NodeLostNotice struct {
	Node   string `msgpack:"node" json:"node"`
	Reason string `msgpack:"reason" json:"reason"` // coord.Silent, coord.ConnectionClosed, ...
	By     string `msgpack:"by" json:"by"`         // the node that declared it dead
}

// SubmitRequest asks the cluster to run a registered job.
type SubmitRequest struct {
	Job  string   `msgpack:"job"`
	Args []string `msgpack:"args"` // the job flags, as for `node run`
}

// SubmitReply answers a SubmitRequest.
type SubmitReply struct {
	Coordinator string `msgpack:"coordinator,omitempty"`
	Error       string `msgpack:"error,omitempty"`
}

// Cmd is a request to one node.
type Cmd struct {
	Kind        string   `msgpack:"kind"` // CmdPrepare, CmdSubmit
	Job         string   `msgpack:"job"`
	Args        []string `msgpack:"args,omitempty"`
	Fingerprint string   `msgpack:"fingerprint,omitempty"`
	Coordinator string   `msgpack:"coordinator,omitempty"`
	Epoch       uint64   `msgpack:"epoch,omitempty"` // the coordinator's lease epoch (fencing)
	// Run names the run of the job the coordinator deploys (see
	// actors.ClusterOptions.Run): the part acts only on that run's messages.
	Run int `msgpack:"run,omitempty"`
	// Restore is the checkpoint the coordinator restores the job from (0:
	// none): a prepared part takes its parallelisms and key-group tables.
	Restore uint64 `msgpack:"restore,omitempty"`
}

// Kinds of Cmd.
const (
	CmdPrepare = "prepare" // start the job's part on this node
	CmdSubmit  = "submit"  // coordinate the job on this node
)

// CmdReply answers a Cmd.
type CmdReply struct {
	Error string `msgpack:"error,omitempty"`
}

// JobEvent is a job's progress or end, published by its coordinator.
type JobEvent struct {
	Job         string  `msgpack:"job" json:"job"`
	State       string  `msgpack:"state" json:"state"` // running, finished, failed, cancelled
	Error       string  `msgpack:"error,omitempty" json:"error,omitempty"`
	Coordinator string  `msgpack:"coordinator" json:"coordinator"`
	Checkpoints int     `msgpack:"checkpoints" json:"checkpoints"`
	Latest      uint64  `msgpack:"latest,omitempty" json:"latest_checkpoint,omitempty"`
	Restarts    int     `msgpack:"restarts" json:"restarts"`
	ElapsedS    float64 `msgpack:"elapsed_s" json:"elapsed_s"`
	// Resumed marks the event published on ResumedSubject the moment the
	// job runs: every task first wired (at the start or after a takeover),
	// or a restarted region wired again.
	Resumed bool `msgpack:"resumed,omitempty" json:"resumed,omitempty"`
}

// CancelRequest asks a job's coordinator to stop it.
type CancelRequest struct {
	Job string `msgpack:"job"`
}

// StatusReply is one node's answer to a status request.
type StatusReply struct {
	Node     string                  `msgpack:"node" json:"node"`
	Slots    int                     `msgpack:"slots" json:"slots"`
	Used     int                     `msgpack:"used" json:"used"`
	Members  []MemberStatus          `msgpack:"members" json:"members"`
	Jobs     []JobStatus             `msgpack:"jobs,omitempty" json:"jobs,omitempty"`
	BadInput transport.CounterValues `msgpack:"bad_input" json:"bad_input"`
	Parts    []string                `msgpack:"parts,omitempty" json:"parts,omitempty"` // jobs with tasks here
	// Held is the node's local copy of checkpoint state, as its heartbeats
	// report it.
	Held []cluster.HeldState `msgpack:"held,omitempty" json:"local_state,omitempty"`
	// Restored sums, per job, the restores of its tasks on the node.
	Restored []cluster.RestoredState `msgpack:"restored,omitempty" json:"restores,omitempty"`
	Rates    []JobRates              `msgpack:"rates,omitempty" json:"rates,omitempty"` // the local jobs' rates
}

// MemberStatus is a node as another node sees it.
type MemberStatus struct {
	Node  string  `msgpack:"node" json:"node"`
	Slots int     `msgpack:"slots" json:"slots"`
	Used  int     `msgpack:"used" json:"used"`
	AgeS  float64 `msgpack:"age_s" json:"heartbeat_age_s"`
}

// JobStatus is a job as its coordinator reports it.
type JobStatus struct {
	Name        string            `msgpack:"name" json:"name"`
	State       string            `msgpack:"state" json:"state"`
	Coordinator string            `msgpack:"coordinator" json:"coordinator"`
	Tasks       map[string]string `msgpack:"tasks" json:"tasks"` // task → node
	Checkpoints []CheckpointBrief `msgpack:"checkpoints" json:"checkpoints"`
	Restarts    int               `msgpack:"restarts" json:"restarts"`
	// RestartCauses counts Restarts by cause (metrics.Cause*).
	RestartCauses map[string]int `msgpack:"restart_causes,omitempty" json:"restart_causes,omitempty"`
	Waiting       string         `msgpack:"waiting,omitempty" json:"waiting,omitempty"` // State JobWaiting: why
	// Rescales are the job's committed live rescales (nil: none).
	Rescales *RescaleStatus `msgpack:"rescales,omitempty" json:"rescales,omitempty"`
}

// JobWaiting is the state a coordinator reports for a job it is about to
// place: learning the membership, or waiting for free slots.
const JobWaiting = "waiting"

// CheckpointBrief is one completed checkpoint in a status.
type CheckpointBrief struct {
	ID         uint64  `msgpack:"id" json:"id"`
	Mode       string  `msgpack:"mode" json:"mode"`
	DurationMs float64 `msgpack:"duration_ms" json:"duration_ms"`
	AgeS       float64 `msgpack:"age_s,omitempty" json:"age_s,omitempty"` // time since it completed
}

// Encode marshals a cluster message.
func Encode(v any) []byte {
	b, err := msgpack.Marshal(v)
	if err != nil {
		// Every type here is plain data; failing is a programming error.
		panic(fmt.Errorf("encode %T: %w", v, err))
	}
	return b
}

// Decode unmarshals a cluster message with a clear error.
func Decode(m *nats.Msg, v any) error {
	if err := msgpack.Unmarshal(m.Data, v); err != nil {
		return fmt.Errorf("decode %T on %s (%d bytes): %w", v, m.Subject, len(m.Data), err)
	}
	return nil
}

// Request sends a request and decodes the reply.
func Request(nc *nats.Conn, subject string, req, reply any, timeout time.Duration) error {
	m, err := nc.Request(subject, Encode(req), timeout)
	if err != nil {
		return fmt.Errorf("request on %s: %w", subject, err)
	}
	return Decode(m, reply)
}
