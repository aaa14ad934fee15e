package actors

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/rs/zerolog"

	"github.com/weirstream/weir/internal/plan"
)

// Job is one submitted job: its plan, settings, live metrics and outcome.
type Job struct {
	Plan    *plan.Job
	Metrics *Metrics

	opts    Options
	log     zerolog.Logger
	node    *Node
	started time.Time // the job's logical clock starts here
	uploads *uploader
	// transfers bounds the live rescales' encodings and decodings of
	// moving key groups that run at once on uploads (rescale_transfer.go).
	transfers transferSlots
	ckptLog   checkpointLog
	inFlight  atomic.Int32 // checkpoints in flight, as the coordinator last saw them
	supLog    supervisionLog
	restLog   restoreLog
	tasks     atomic.Int64 // task instances of the job running on this node
	live      liveMetrics  // per-task and per-channel figures for /metrics

	// what the web page shows: recent events and each task's state size
	events    eventLog
	taskState taskStateLog

	mu        sync.Mutex
	pid       *actor.PID
	placement map[string]string // task name → node (cluster jobs)
	rescaled  RescaleStats      // the live rescales that committed
	err       error
	done      chan struct{}
	gone      chan struct{} // closed when the job's actors have all stopped
	closed    bool
}

// Done is closed when the job has finished or failed.
func (j *Job) Done() <-chan struct{} { return j.done }

// Gone is closed once the job's actors (its coordinator or part, its tasks
// and their channels) have all stopped: nothing of the job runs any more.
func (j *Job) Gone() <-chan struct{} { return j.gone }

// Err is the reason the job failed, or nil after a clean finish. Valid after Done.
func (j *Job) Err() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.err
}

// Stop asks the job to stop without draining: with checkpoints, its sources
// stop reading and a stop checkpoint captures what is in flight; once it is
// complete and committed by every sink (or after stopCheckpointWait, at the
// last completed checkpoint), the job ends, to be restored from there.
// Without checkpoints it ends at once.
func (j *Job) Stop(reason string) { j.send(&stopJobMsg{reason: reason}) }

// Drain asks the job to end its sources and drain; the job then finishes
// normally, with a final aligned checkpoint.
func (j *Job) Drain(reason string) { j.send(&stopJobMsg{reason: reason, drain: true}) }

// send delivers m to the job's actor, once it has one.
func (j *Job) send(m any) {
	j.mu.Lock()
	pid := j.pid
	j.mu.Unlock()
	if pid != nil {
		j.node.system.Root.Send(pid, m)
	}
}

// finish records the outcome once and wakes waiters.
func (j *Job) finish(err error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed {
		return
	}
	j.closed = true
	j.err = err
	close(j.done)
}

// taskName is how logs and errors name a task instance.
func taskName(op *plan.Operator, instance int) string {
	return taskID(op, instance).String()
}
