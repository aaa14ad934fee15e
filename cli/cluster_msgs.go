package cli

import (
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/weirstream/weir/transport"
)

// Cluster-wide request subjects (msgpack bodies, readable with `node inspect`).
const (
	// subjSubmit takes job submissions; one node (queue group) coordinates.
	subjSubmit = "weir.cluster.submit"
	// subjStatus asks every node for its status.
	subjStatus = "weir.cluster.status"
	// subjCancel asks the coordinator of a job to stop it.
	subjCancel = "weir.cluster.cancel"
	// submitQueue is the queue group of subjSubmit.
	submitQueue = "weir-submit"
)

// nodeCmdSubject is where a node takes requests addressed to it alone.
func nodeCmdSubject(node string) string { return transport.NodeSubject(node, "cmd") }

// jobEventsSubject is where a job's coordinator publishes progress and the end.
func jobEventsSubject(job string) string { return "weir." + job + ".events" }

// submitRequest asks the cluster to run a registered job.
type submitRequest struct {
	Job  string   `msgpack:"job"`
	Args []string `msgpack:"args"` // the job flags, as for `node run`
}

// submitReply answers a submitRequest.
type submitReply struct {
	Coordinator string `msgpack:"coordinator,omitempty"`
	Error       string `msgpack:"error,omitempty"`
}

// nodeCmd is a request to one node.
type nodeCmd struct {
	Kind        string   `msgpack:"kind"` // cmdPrepare, cmdSubmit
	Job         string   `msgpack:"job"`
	Args        []string `msgpack:"args,omitempty"`
	Fingerprint string   `msgpack:"fingerprint,omitempty"`
	Coordinator string   `msgpack:"coordinator,omitempty"`
	Epoch       uint64   `msgpack:"epoch,omitempty"` // the coordinator's lease epoch (fencing)
	// Restore is the checkpoint the coordinator restores the job from (0:
	// none): a prepared part takes its parallelisms and key-group tables.
	Restore uint64 `msgpack:"restore,omitempty"`
}

// Kinds of nodeCmd.
const (
	cmdPrepare = "prepare" // start the job's part on this node
	cmdSubmit  = "submit"  // coordinate the job on this node
)

// cmdReply answers a nodeCmd.
type cmdReply struct {
	Error string `msgpack:"error,omitempty"`
}

// jobEvent is a job's progress or end, published by its coordinator.
type jobEvent struct {
	Job         string  `msgpack:"job" json:"job"`
	State       string  `msgpack:"state" json:"state"` // running, finished, failed, cancelled
	Error       string  `msgpack:"error,omitempty" json:"error,omitempty"`
	Coordinator string  `msgpack:"coordinator" json:"coordinator"`
	Checkpoints int     `msgpack:"checkpoints" json:"checkpoints"`
	Latest      uint64  `msgpack:"latest,omitempty" json:"latest_checkpoint,omitempty"`
	Restarts    int     `msgpack:"restarts" json:"restarts"`
	ElapsedS    float64 `msgpack:"elapsed_s" json:"elapsed_s"`
}

// cancelRequest asks a job's coordinator to stop it.
type cancelRequest struct {
	Job string `msgpack:"job"`
}

// statusReply is one node's answer to a status request.
type statusReply struct {
	Node     string                  `msgpack:"node" json:"node"`
	Slots    int                     `msgpack:"slots" json:"slots"`
	Used     int                     `msgpack:"used" json:"used"`
	Members  []memberStatus          `msgpack:"members" json:"members"`
	Jobs     []jobStatus             `msgpack:"jobs,omitempty" json:"jobs,omitempty"`
	BadInput transport.CounterValues `msgpack:"bad_input" json:"bad_input"`
	Parts    []string                `msgpack:"parts,omitempty" json:"parts,omitempty"` // jobs with tasks here
}

// memberStatus is a node as another node sees it.
type memberStatus struct {
	Node  string  `msgpack:"node" json:"node"`
	Slots int     `msgpack:"slots" json:"slots"`
	Used  int     `msgpack:"used" json:"used"`
	AgeS  float64 `msgpack:"age_s" json:"heartbeat_age_s"`
}

// jobStatus is a job as its coordinator reports it.
type jobStatus struct {
	Name        string            `msgpack:"name" json:"name"`
	State       string            `msgpack:"state" json:"state"`
	Coordinator string            `msgpack:"coordinator" json:"coordinator"`
	Tasks       map[string]string `msgpack:"tasks" json:"tasks"` // task → node
	Checkpoints []checkpointBrief `msgpack:"checkpoints" json:"checkpoints"`
	Restarts    int               `msgpack:"restarts" json:"restarts"`
	Waiting     string            `msgpack:"waiting,omitempty" json:"waiting,omitempty"` // State jobWaiting: why
}

// jobWaiting is the state a coordinator reports for a job it is about to
// place: learning the membership, or waiting for free slots.
const jobWaiting = "waiting"

// checkpointBrief is one completed checkpoint in a status.
type checkpointBrief struct {
	ID         uint64  `msgpack:"id" json:"id"`
	Mode       string  `msgpack:"mode" json:"mode"`
	DurationMs float64 `msgpack:"duration_ms" json:"duration_ms"`
}

// encode marshals a cluster message.
func encode(v any) []byte {
	b, err := msgpack.Marshal(v)
	if err != nil {
		// Every type here is plain data; failing is a programming error.
		panic(fmt.Errorf("encode %T: %w", v, err))
	}
	return b
}

// decode unmarshals a cluster message with a clear error.
func decode(m *nats.Msg, v any) error {
	if err := msgpack.Unmarshal(m.Data, v); err != nil {
		return fmt.Errorf("decode %T on %s (%d bytes): %w", v, m.Subject, len(m.Data), err)
	}
	return nil
}

// request sends a request and decodes the reply.
func request(nc *nats.Conn, subject string, req, reply any, timeout time.Duration) error {
	m, err := nc.Request(subject, encode(req), timeout)
	if err != nil {
		return fmt.Errorf("request on %s: %w", subject, err)
	}
	return decode(m, reply)
}
