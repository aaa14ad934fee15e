package web

import "time"

// The JSON the API serves. Field names are part of the API that scripts
// read (see the README's web page section).

// JobSummary is one job in /api/jobs.
type JobSummary struct {
	Name        string  `json:"name"`
	State       string  `json:"state"`
	Coordinator string  `json:"coordinator,omitempty"`
	Error       string  `json:"error,omitempty"`
	RecordsIn   int64   `json:"records_in"`
	RecordsOut  int64   `json:"records_out"`
	InPerS      float64 `json:"records_in_per_s"`
	OutPerS     float64 `json:"records_out_per_s"`
	Restarts    int     `json:"restarts"`
	Checkpoints int     `json:"checkpoints"`
}

// JobDetail is /api/jobs/NAME: the graph, the tasks, checkpoints,
// failures, restores, the key-group map and the timeline.
type JobDetail struct {
	JobSummary
	At             time.Time    `json:"at"`
	MaxParallelism int          `json:"max_parallelism"`
	Operators      []Operator   `json:"operators"`
	Edges          []Edge       `json:"edges"`
	Tasks          []Task       `json:"tasks"`
	Checkpoints    []Checkpoint `json:"checkpoint_history"`
	Failures       Failures     `json:"failures"`
	Restores       Restores     `json:"restores"`
	KeyGroups      []KeyGroups  `json:"key_groups"`
	Timeline       []Event      `json:"timeline"`
}

// Operator is one node of the job graph. Rates and backpressure sum or
// average its tasks that this node can see.
type Operator struct {
	ID          int     `json:"id"`
	Name        string  `json:"name"`
	Kind        string  `json:"kind"` // source, transform or sink
	Parallelism int     `json:"parallelism"`
	Keyed       bool    `json:"keyed"`
	InPerS      float64 `json:"records_in_per_s"`
	OutPerS     float64 `json:"records_out_per_s"`
	// Backpressure is the share of recent polls in which its tasks were
	// blocked on output credit, averaged over its tasks: 0 to 1.
	Backpressure float64 `json:"backpressure"`
}

// Edge is one edge of the job graph.
type Edge struct {
	From        int    `json:"from"`
	To          int    `json:"to"`
	Partitioner string `json:"partitioner"`
}

// Task is one parallel instance of an operator.
type Task struct {
	Name     string `json:"name"`
	Operator string `json:"operator"`
	Instance int    `json:"instance"`
	Node     string `json:"node"`
	Phase    string `json:"phase"`
	// Live is false when this node cannot see the task's counters (it runs
	// on another node): the record fields are then 0.
	Live         bool    `json:"live"`
	RecordsIn    int64   `json:"records_in"`
	RecordsOut   int64   `json:"records_out"`
	InPerS       float64 `json:"records_in_per_s"`
	OutPerS      float64 `json:"records_out_per_s"`
	Backpressure float64 `json:"backpressure"`
	// QueuedBuffers are buffers waiting in its input channels and outboxes.
	QueuedBuffers int `json:"queued_buffers"`
	// StateBytes is the full size of its state in the latest completed
	// checkpoint (with incremental checkpoints: whole sections and deltas,
	// whichever checkpoint wrote them).
	StateBytes int64 `json:"state_bytes"`
	KeyGroups  int   `json:"key_groups"`
}

// Checkpoint is one completed checkpoint.
type Checkpoint struct {
	ID          uint64  `json:"id"`
	Mode        string  `json:"mode"`
	DurationMs  float64 `json:"duration_ms"`
	AlignmentMs float64 `json:"alignment_ms"`
	// StateBytes is the full size of the state the checkpoint restores
	// from; StateWrittenBytes the state bytes it wrote (less with
	// incremental checkpoints).
	StateBytes        int64 `json:"state_bytes"`
	StateWrittenBytes int64 `json:"state_written_bytes"`
	InflightBytes     int64 `json:"inflight_bytes"` // channel state written
	// InflightRefBytes is channel state referred to in earlier
	// checkpoints' blobs instead of written again.
	InflightRefBytes int64 `json:"inflight_ref_bytes"`
	InflightBuffers  int64 `json:"inflight_buffers"`
	Final            bool  `json:"final"`
}

// Failures are a job's failures and restarts, with their causes.
type Failures struct {
	Failures   int       `json:"failures"`
	Restarts   int       `json:"restarts"`
	Kills      int       `json:"kills"`
	RecoveryMs []float64 `json:"recovery_ms"`
	Causes     []Event   `json:"causes"` // the failure events, newest last
}

// Restores sum where restored state came from.
type Restores struct {
	Count          int   `json:"count"`
	LocalBytes     int64 `json:"local_bytes"`
	RemoteBytes    int64 `json:"remote_bytes"`
	LocalSections  int   `json:"local_sections"`
	RemoteSections int   `json:"remote_sections"`
}

// KeyGroups is the key-group map of one keyed operator.
type KeyGroups struct {
	Operator string     `json:"operator"`
	Groups   []KeyGroup `json:"groups"` // index = key group
}

// KeyGroup says who owns one key group and which nodes hold it locally.
type KeyGroup struct {
	Group    int      `json:"group"`
	Instance int      `json:"instance"`
	Task     string   `json:"task"`
	Node     string   `json:"node"`
	LocalOn  []string `json:"local_on,omitempty"`
}

// Event is one entry of the timeline: failures, restarts, restores,
// rescales.
type Event struct {
	At     time.Time `json:"at"`
	Kind   string    `json:"kind"`
	Task   string    `json:"task,omitempty"`
	Detail string    `json:"detail,omitempty"`
}

// Node is one node in /api/nodes, with the state it holds on its disk.
type Node struct {
	ID            string      `json:"id"`
	Slots         int         `json:"slots"`
	Used          int         `json:"used"`
	HeartbeatAgeS float64     `json:"heartbeat_age_s"`
	Jobs          []string    `json:"jobs,omitempty"`
	Held          []HeldState `json:"held,omitempty"`
}

// HeldState is one operator's state a node keeps locally.
type HeldState struct {
	Job        string   `json:"job"`
	Operator   string   `json:"operator"`
	Checkpoint uint64   `json:"checkpoint"`
	KeyGroups  [][2]int `json:"key_groups"` // ranges [first,last], inclusive
}
