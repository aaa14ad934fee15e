package rescale

import (
	"errors"
	"fmt"
	"time"
)

// ErrRescaleRunning is returned by Start while another rescale runs and by
// CheckpointStarted while a rescale runs or waits to start.
var ErrRescaleRunning = errors.New("a rescale is running")

// CoordinatorConfig configures a Coordinator.
type CoordinatorConfig struct {
	// Timeout fails a rescale that has not committed this long after Start
	// (0: never).
	Timeout time.Duration
}

type phase int

const (
	idle phase = iota
	waiting
	preparing
	switching
)

func (p phase) String() string {
	return [...]string{"idle", "waiting for a checkpoint", "preparing", "switching"}[p]
}

// TaskKey names one instance of an operator.
type TaskKey struct {
	Operator string
	Instance int
}

func (k TaskKey) String() string { return fmt.Sprintf("%s[%d]", k.Operator, k.Instance) }

// Coordinator is the job's side of a rescale as a pure state machine: events
// in (Start, checkpoint started and ended, Prepared, TaskDone, Failed, Tick,
// with logical time), actions out. It keeps a rescale and a checkpoint from
// running at once, spawns the new instances, injects the barrier once they
// are wired, commits once every instance of the changed operators has done
// its part, and turns any failure before the commit into a recovery with the
// old tables.
type Coordinator struct {
	cfg        CoordinatorConfig
	phase      phase
	plan       *Plan
	start      time.Duration
	checkpoint uint64 // pending checkpoint, 0 for none
	spawning   map[TaskKey]bool
	pending    map[TaskKey]bool // instances yet to report TaskDone
	// fences maps each old instance of a changed operator with outputs to
	// the consumer instances that have yet to drain its channel.
	fences map[TaskKey]map[TaskKey]bool
	result Result
	// inputEnded is the job's final checkpoint once it completed, else 0
	// (FinalCheckpointCompleted).
	inputEnded uint64
}

// NewCoordinator returns an idle coordinator.
func NewCoordinator(cfg CoordinatorConfig) *Coordinator { return &Coordinator{cfg: cfg} }

// MayCheckpoint reports whether a checkpoint may start now: not while a
// rescale runs or waits to start.
func (c *Coordinator) MayCheckpoint() bool { return c.phase == idle }

// Running returns the running rescale's plan, or nil.
func (c *Coordinator) Running() *Plan {
	if c.phase == idle {
		return nil
	}
	return c.plan
}

// CheckpointStarted records that checkpoint id started. It is refused while a
// rescale runs or waits.
func (c *Coordinator) CheckpointStarted(id uint64) error {
	if c.phase != idle {
		return fmt.Errorf("checkpoint %d during rescale %d (%s): %w", id, c.plan.Input.Seq, c.phase, ErrRescaleRunning)
	}
	c.checkpoint = id
	return nil
}

// CheckpointEnded records that checkpoint id completed or was aborted; a
// rescale waiting for it starts.
func (c *Coordinator) CheckpointEnded(now time.Duration, id uint64) []Action {
	if id != c.checkpoint {
		return nil
	}
	c.checkpoint = 0
	if c.phase != waiting {
		return nil
	}
	c.result.Waited = now - c.start
	return c.prepare()
}

// Start begins rescale p.
func (c *Coordinator) Start(now time.Duration, p *Plan) ([]Action, error) {
	if p == nil || len(p.Changes) == 0 {
		return nil, errors.New("start rescale: empty plan")
	}
	if c.phase != idle {
		return nil, fmt.Errorf("start rescale %d: rescale %d is %s: %w", p.Input.Seq, c.plan.Input.Seq, c.phase, ErrRescaleRunning)
	}
	if c.inputEnded != 0 {
		return nil, fmt.Errorf("start rescale %d: %w", p.Input.Seq, c.endedReason())
	}
	c.plan, c.start = p, now
	c.result = Result{Rescale: p.Input.Seq, Changes: p.Summary(), Moved: p.Moved(), Minimum: p.Minimum()}
	c.pending = map[TaskKey]bool{}
	for _, ch := range p.Changes {
		for i := 0; i < max(ch.From, ch.To); i++ {
			c.pending[TaskKey{ch.Operator, i}] = true
		}
	}
	c.fences = fencesOf(p)
	if c.checkpoint != 0 {
		c.phase = waiting
		return []Action{WaitCheckpoint{ID: c.checkpoint}}, nil
	}
	return c.prepare(), nil
}

// prepare spawns the added instances, or injects the barrier when none is
// added. Every change has old instances, which need the barrier, so the
// rescale never commits before it.
func (c *Coordinator) prepare() []Action {
	c.phase = preparing
	c.spawning = map[TaskKey]bool{}
	node := map[TaskKey]string{}
	for _, pl := range c.plan.Placement {
		node[TaskKey{pl.Operator, pl.Instance}] = pl.Node
	}
	var acts []Action
	for _, ch := range c.plan.Changes {
		for _, i := range ch.Added {
			k := TaskKey{ch.Operator, i}
			c.spawning[k] = true
			acts = append(acts, Spawn{Operator: ch.Operator, Instance: i, Node: node[k]})
		}
	}
	if len(acts) == 0 {
		return c.inject()
	}
	return acts
}

func (c *Coordinator) inject() []Action {
	c.phase = switching
	return []Action{InjectBarrier{Rescale: c.plan.Input.Seq}}
}

// fencesOf lists, for each old instance of each changed operator, the
// consumer instances that have a channel from it: every one of them after
// the edge's partitioner before the rescale (forward: the same instance).
func fencesOf(p *Plan) map[TaskKey]map[TaskKey]bool {
	topo := p.Input.Topology
	out := map[TaskKey]map[TaskKey]bool{}
	for _, ch := range p.Changes {
		for _, e := range topo.Edges {
			if e.From != ch.Operator {
				continue
			}
			pd := topo.Operators[topo.index(e.To)].Parallelism
			for o := 0; o < ch.From; o++ {
				k := TaskKey{ch.Operator, o}
				if out[k] == nil {
					out[k] = map[TaskKey]bool{}
				}
				for j := 0; j < pd; j++ {
					if e.Partitioner != "forward" || j == o {
						out[k][TaskKey{e.To, j}] = true
					}
				}
			}
		}
	}
	return out
}

// InputDrained is consumer reporting that it has processed everything
// producer sent before its rescale barrier. Once every consumer of an old
// instance of a changed operator has, the groups moved from that instance
// may be released (Fence).
func (c *Coordinator) InputDrained(now time.Duration, consumer, producer TaskKey) []Action {
	if c.phase != switching {
		return nil
	}
	waiting, ok := c.fences[producer]
	if !ok {
		return nil
	}
	delete(waiting, consumer)
	if len(waiting) > 0 {
		return nil
	}
	delete(c.fences, producer)
	return []Action{Fence{Operator: producer.Operator, From: producer.Instance}}
}

// Prepared is an added instance spawned and wired.
func (c *Coordinator) Prepared(now time.Duration, k TaskKey) ([]Action, error) {
	if c.phase != preparing || !c.spawning[k] {
		return nil, fmt.Errorf("rescale: %s prepared, which is not being spawned (%s)", k, c.phase)
	}
	delete(c.spawning, k)
	if len(c.spawning) > 0 {
		return nil, nil
	}
	return c.inject(), nil
}

// TaskDone is an instance of a changed operator reporting its part done.
func (c *Coordinator) TaskDone(now time.Duration, k TaskKey, r TaskResult) ([]Action, error) {
	if c.phase != preparing && c.phase != switching {
		return nil, fmt.Errorf("rescale: %s done while %s", k, c.phase)
	}
	if !c.pending[k] {
		return nil, fmt.Errorf("rescale %d: %s done, which is not an instance of a changed operator or reported twice", c.plan.Input.Seq, k)
	}
	delete(c.pending, k)
	c.result.Bytes += r.Bytes
	c.result.LongestPause = max(c.result.LongestPause, r.LongestPause)
	if c.phase != switching {
		return nil, nil
	}
	return c.maybeCommit(now), nil
}

// maybeCommit commits once every instance is done.
func (c *Coordinator) maybeCommit(now time.Duration) []Action {
	if len(c.pending) > 0 {
		return nil
	}
	c.phase = idle
	c.result.Took = now - c.start
	return []Action{Commit{Rescale: c.plan.Input.Seq}, Finished{Result: c.result}}
}

// Failed is a failure anywhere in the job (a task, a channel, a node) or of
// the rescale itself (a protocol error). Before the commit it aborts the
// rescale and recovers the job with the old tables; with no rescale running
// it is none of the coordinator's business.
func (c *Coordinator) Failed(now time.Duration, reason string) []Action {
	if c.phase == idle {
		return nil
	}
	c.phase = idle
	seq := c.plan.Input.Seq
	return []Action{Abort{Rescale: seq, Reason: reason}, Recover{Rescale: seq}}
}

// Tick fails a rescale that has run past its timeout.
func (c *Coordinator) Tick(now time.Duration) []Action {
	if c.phase == idle || c.cfg.Timeout <= 0 || now-c.start < c.cfg.Timeout {
		return nil
	}
	return c.Failed(now, fmt.Sprintf("timed out after %s while %s", now-c.start, c.phase))
}
