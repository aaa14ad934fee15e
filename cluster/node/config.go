package node

import (
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/metrics"
	"github.com/weirstream/weir/transport"
)

// DefaultPlacementTimeout is how long a job that does not fit waits for
// slots by default: long enough for a restarted node to rejoin and for
// several heartbeat timeouts, short of `node submit`'s wait for an answer.
const DefaultPlacementTimeout = 30 * time.Second

// DefaultLocalWait is how long, by default, the tasks of a node declared
// dead wait for it to return with its workdir: not at all. A node restarted
// at once is back well within the heartbeat timeout and gets its tasks back
// without any wait; a wait helps only slower restarts and delays recovery
// from every node that does not return (see the README's "A restarted node
// rejoins" for the measurements).
const DefaultLocalWait = 0

// MaxPlacementTimeout bounds Config.PlacementTimeout.
const MaxPlacementTimeout = 24 * time.Hour

// MinHeartbeatTimeout bounds Config.HeartbeatTimeout from below.
const MinHeartbeatTimeout = 300 * time.Millisecond

// Config is what a node agent runs with.
type Config struct {
	// ID names the node (letters, digits, - and _): the same id with the
	// same Workdir finds its state again.
	ID string
	// Workdir holds the node's copy of checkpoint state.
	Workdir string
	// Slots is how many task instances the node runs at most.
	Slots int
	// HeartbeatTimeout: a node silent this long is declared dead.
	HeartbeatTimeout time.Duration
	// PlacementTimeout is how long a job that does not fit waits for slots.
	PlacementTimeout time.Duration
	// LocalWait is how long the tasks of a node that fell silent wait for
	// it to return with its workdir before they are placed elsewhere (0:
	// they do not wait).
	LocalWait time.Duration
	// DisconnectGrace is how long a node's connection to NATS must stay
	// closed (its probes answered "no responders") before it is declared
	// dead; 0 takes DefaultDisconnectGrace. At most HeartbeatTimeout.
	DisconnectGrace time.Duration
	// NoLocalRecovery makes every restore on this node read the primary
	// store (--local-recovery=false); the local copy is still kept.
	NoLocalRecovery bool
	// DirectWrites writes the node's copy of checkpoint state in Workdir
	// past the page cache (--checkpoint-direct-io, store.WithDirectWrites).
	DirectWrites bool
	// Jobs builds a job from its name and arguments, as every node of the
	// cluster does from what `node submit` sent.
	Jobs JobBuilder
	// Log receives the agent's structured logs.
	Log zerolog.Logger
	// Counters counts bad input seen on the wire (nil: the agent's own).
	Counters *transport.Counters
	// Metrics is the registry /metrics serves (nil: the node's own, unserved).
	Metrics *metrics.Registry
	// StoreConn, when set, carries the checkpoint store's transfers (the
	// blobs and manifests the node writes and restores from), so that the
	// megabytes of state a checkpoint or a restore moves do not queue
	// ahead of heartbeats, lease renewals and records on the node's own
	// connection; nil: they share it. The caller owns it.
	StoreConn *nats.Conn
	// HoldRescaleCommit is a test hook (actors.ClusterOptions): the live
	// rescales of the jobs this node coordinates are held before their
	// commit.
	HoldRescaleCommit bool
}

// JobBuilder builds the job named name from its arguments. An unknown job
// or bad arguments is an error that the submitter sees.
type JobBuilder func(name string, args []string) (*JobSpec, error)

// JobSpec is a job built from its name and arguments.
type JobSpec struct {
	Graph *weir.Graph
	// Run is the job's run configuration (its logger is the agent's):
	// Restore names the checkpoint a submission resumes from, Duration ends
	// the sources after that long.
	Run weir.RunConfig
	// Out is the job's output file, emptied when the job starts afresh
	// ("": none).
	Out string
}

// check validates the configuration.
func (c Config) check() error {
	switch {
	case c.Workdir == "":
		return errors.New("node agent: no working directory")
	case c.Slots < 1:
		return fmt.Errorf("node agent: %d slots, want at least 1", c.Slots)
	case c.HeartbeatTimeout < MinHeartbeatTimeout:
		return fmt.Errorf("node agent: heartbeat timeout %v, want at least %v", c.HeartbeatTimeout, MinHeartbeatTimeout)
	case c.PlacementTimeout < 0 || c.PlacementTimeout > MaxPlacementTimeout:
		return fmt.Errorf("node agent: placement timeout %v, want between 0 and %v", c.PlacementTimeout, MaxPlacementTimeout)
	case c.LocalWait < 0 || c.LocalWait > MaxPlacementTimeout:
		return fmt.Errorf("node agent: local wait %v, want between 0 and %v", c.LocalWait, MaxPlacementTimeout)
	case c.DisconnectGrace < 0 || c.DisconnectGrace > c.HeartbeatTimeout:
		return fmt.Errorf("node agent: disconnect grace %v, want between 0 and the heartbeat timeout %v", c.DisconnectGrace, c.HeartbeatTimeout)
	case c.Jobs == nil:
		return errors.New("node agent: no job builder")
	}
	if err := transport.ValidNode(c.ID); err != nil {
		return fmt.Errorf("node agent: id: %w", err)
	}
	return nil
}
