package checkpoints

import (
	"fmt"
	"slices"
	"time"

	"github.com/weirstream/weir/internal/task"
)

// Coordinator is the checkpoint bookkeeping of one job. It is not safe for
// concurrent use; the coordinator actor calls it from one goroutine.
type Coordinator struct {
	cfg   Config
	tasks map[task.ID]struct{}

	lastID   uint64        // newest id triggered (or restored)
	nextAt   time.Duration // earliest time of the next non-final trigger
	retained []uint64      // completed ids kept, ascending

	// The checkpoint in flight, if inFlight.
	inFlight bool
	id       uint64
	started  time.Duration
	final    bool
	stop     bool
	writing  bool // all acks in, manifest being written
	acked    map[task.ID]struct{}

	// paused holds back triggers while a region is being restored.
	paused bool

	finalRequested bool
	finalDone      bool
	stopRequested  bool
	stopDone       bool
	endID          uint64 // the final or stop checkpoint, once completed

	sources   map[task.ID]bool   // source → idle
	committed map[task.ID]uint64 // sink → newest checkpoint it committed
	// restarting holds the sources stopped for a restart and not respawned
	// yet: an idle report then comes from the incarnation that was stopped.
	restarting map[task.ID]bool
}

// New returns a Coordinator that continues after checkpoint lastCompleted (0
// for none), which it counts as retained, numbering new checkpoints after
// max(lastCompleted, cfg.After). The first checkpoint is triggered by the
// first Tick at or after now + cfg.Interval.
func New(cfg Config, lastCompleted uint64, now time.Duration) (*Coordinator, error) {
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("new checkpoint coordinator: %w", err)
	}
	c := &Coordinator{
		cfg:    cfg,
		tasks:  make(map[task.ID]struct{}, len(cfg.Tasks)),
		lastID: max(lastCompleted, cfg.After),
		nextAt: now + cfg.Interval,
		acked:  make(map[task.ID]struct{}, len(cfg.Tasks)),
	}
	c.cfg.Tasks = slices.Clone(cfg.Tasks)
	c.sources = make(map[task.ID]bool, len(cfg.Sources))
	c.restarting = make(map[task.ID]bool)
	for _, t := range cfg.Sources {
		c.sources[t] = false
	}
	c.committed = make(map[task.ID]uint64, len(cfg.Sinks))
	for _, t := range cfg.Sinks {
		c.committed[t] = 0
	}
	for _, t := range cfg.Tasks {
		c.tasks[t] = struct{}{}
	}
	if lastCompleted > 0 {
		c.retained = []uint64{lastCompleted}
	}
	return c, nil
}

// Pending returns the checkpoint in flight, if any.
func (c *Coordinator) Pending() (id uint64, ok bool) {
	if !c.inFlight {
		return 0, false
	}
	return c.id, true
}

// LastTriggered returns the newest checkpoint id triggered so far (before the
// first trigger: the id new checkpoints continue after).
func (c *Coordinator) LastTriggered() uint64 { return c.lastID }

// Completed returns the retained completed checkpoint ids, oldest first.
func (c *Coordinator) Completed() []uint64 { return slices.Clone(c.retained) }

// trigger starts the next checkpoint.
func (c *Coordinator) trigger(now time.Duration) Action {
	c.lastID++
	c.inFlight = true
	c.id = c.lastID
	c.started = now
	c.stop = c.stopRequested
	c.final = c.finalRequested && !c.stop
	c.writing = false
	clear(c.acked)
	return Trigger{ID: c.id, Final: c.final, Stop: c.stop}
}

// end closes the checkpoint in flight (completed or aborted) and, if a final
// or stop checkpoint is still wanted, triggers it at once.
func (c *Coordinator) end(acts []Action, now time.Duration) []Action {
	c.inFlight = false
	c.writing = false
	clear(c.acked)
	c.nextAt = now + c.cfg.Interval
	if c.lastWanted() && !c.paused {
		acts = append(acts, c.trigger(now))
	}
	return acts
}

// lastWanted says a final or stop checkpoint is requested and not done.
func (c *Coordinator) lastWanted() bool {
	return !c.done() && (c.finalRequested || c.stopRequested)
}

// done says the job's last checkpoint (final or stop) completed: nothing
// more is triggered.
func (c *Coordinator) done() bool { return c.finalDone || c.stopDone }

// abort aborts the checkpoint in flight for reason.
func (c *Coordinator) abort(acts []Action, reason string, now time.Duration) []Action {
	acts = append(acts, Aborted{ID: c.id, Reason: reason})
	return c.end(acts, now)
}

// collecting says if id is in flight and still waiting for acknowledgements.
func (c *Coordinator) collecting(id uint64) bool {
	return c.inFlight && !c.writing && id == c.id
}

// knownTask reports an event from a task outside the job as Ignored.
func (c *Coordinator) knownTask(id uint64, tk task.ID, event string) (Action, bool) {
	if _, ok := c.tasks[tk]; ok {
		return nil, true
	}
	return Ignored{ID: id, Task: tk, Reason: event + " from a task not in the job"}, false
}
