package actors

import (
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/weirstream/weir/internal/plan"
	taskid "github.com/weirstream/weir/internal/task"
	"github.com/weirstream/weir/store"
)

// jobActor is a job's coordinator and the supervisor of its tasks. It deploys
// the tasks, wires their channels, starts the sources and watches for the end.
type jobActor struct {
	job *Job

	tasks      [][]*actor.PID   // [operator][instance]
	inputs     [][][]*actor.PID // [operator][instance][input] channel actors
	byPID      map[string]taskid.ID
	ready      int                // tasks whose current incarnation is ready
	readyTasks map[taskid.ID]bool // which they are
	finished   int
	total      int
	started    time.Time
	draining   bool // sources were told to end (drain or duration)
	stopping   bool // a stop checkpoint was asked for (stop without draining)
	ended      bool

	stopTimer *time.Timer // fires stopDeadlineMsg while stopping

	flushTicker *ticker

	ckpt *jobCheckpoints // nil without checkpoints
	sv   *jobSupervision // nil without checkpoints (no restarts)
	cl   *jobCluster     // nil outside a cluster

	ctx           actor.Context     // the actor's own context (for HandleFailure)
	gens          map[taskid.ID]int // current incarnation of each task
	wired         bool
	finishedTasks map[taskid.ID]bool
	topo          planTopology // the plan's tasks, sources, sinks and regions
	rs            *jobRescales // live rescales (nil before the first)
}

func newJobActor(j *Job) *jobActor {
	return &jobActor{job: j, byPID: map[string]taskid.ID{}, readyTasks: map[taskid.ID]bool{}, finishedTasks: map[taskid.ID]bool{}, gens: map[taskid.ID]int{}}
}

// Receive handles the coordinator's messages.
func (a *jobActor) Receive(ctx actor.Context) {
	defer func() {
		if r := recover(); r != nil {
			a.job.log.Error().Interface("panic", r).Str("stack", string(debug.Stack())).Msg("coordinator panicked")
			panic(r)
		}
	}()
	if a.fenced(ctx) {
		return
	}
	if a.onCheckpointMsg(ctx, ctx.Message()) {
		return
	}
	switch m := ctx.Message().(type) {
	case *actor.Started:
		// Tasks may fail while deploying, before Submit has recorded the pid.
		a.ctx = ctx
		a.job.mu.Lock()
		a.job.pid = ctx.Self()
		a.job.mu.Unlock()
		if err := a.startCluster(ctx); err != nil {
			a.end(ctx, err)
			return
		}
		a.deploy(ctx)
	case *taskReadyMsg:
		if a.stale(m.op, m.instance, m.gen) {
			return
		}
		if a.tasks[m.op][m.instance] == nil {
			return // stopped for a restart since: its respawn reports again
		}
		a.inputs[m.op][m.instance] = m.inputs
		a.setReady(a.idOf(m.op, m.instance), true)
		if !a.regionReady(ctx, a.idOf(m.op, m.instance)) {
			a.maybeWireAll(ctx)
		}
		a.rescaleOnReady(ctx, m)
	case *taskFinishedMsg:
		if a.stale(m.op, m.instance, m.gen) || a.finishedTasks[a.idOf(m.op, m.instance)] {
			return
		}
		a.finished++
		a.finishedTasks[a.idOf(m.op, m.instance)] = true
		a.job.log.Debug().Str("task", taskName(a.job.Plan.Operators[m.op], m.instance)).Msg("task finished")
		a.rescaleFinished(ctx, m.op, m.instance)
		a.maybeEnd(ctx)
	case *sinkCommittedMsg:
		a.onSinkCommitted(ctx, m)
	case *stopDeadlineMsg:
		a.onStopDeadline(ctx)
	case *taskFailedMsg:
		a.onFailure(ctx, m.who, m.reason)
	case *actor.Terminated:
		a.onTerminated(ctx, m.Who)
	case *chaosTickMsg:
		if a.sv != nil {
			a.chaosKill(ctx)
		}
	case *taskResumedMsg:
		if !a.stale(m.op, m.instance, m.gen) {
			a.onResumed(ctx, m.op, m.instance)
		}
	case *stopJobMsg:
		if m.drain {
			a.stopSources(ctx, m.reason)
		} else {
			a.stop(ctx, m.reason)
		}
	case *remoteTerminatedMsg:
		// A task's node reports it ended: tell its stand-in.
		a.job.log.Debug().Int("operator", m.op).Int("instance", m.instance).Msg("task's node reports it ended")
		if m.op >= 0 && m.op < len(a.tasks) && m.instance >= 0 && m.instance < len(a.tasks[m.op]) {
			if pid := a.tasks[m.op][m.instance]; pid != nil {
				ctx.Send(pid, m)
			}
		}
	case *abandonMsg:
		a.abandon(ctx, m.reason)
	case *dumpJobMsg:
		a.dump(m)
	case *nodeLostMsg:
		a.onNodeLost(ctx, m.node, m.back)
	case *linkFailedMsg:
		a.onLinkFailed(ctx, m)
	case *actor.Stopping:
		a.stopStopTimer()
		a.stopFlushTicker()
		a.stopChaos()
		a.stopIO()
	default:
		a.onRescaleMsg(ctx, m)
	}
}

// deploy spawns every task instance as a child.
func (a *jobActor) deploy(ctx actor.Context) {
	a.started = time.Now()
	p := a.job.Plan
	a.topo = topologyOf(p)
	a.tasks, a.inputs = taskSlots(p)
	for _, op := range p.Operators {
		for i := 0; i < op.Parallelism; i++ {
			if err := a.spawnTask(ctx, op, i, a.job.opts.Checkpoint.Restore); err != nil {
				a.end(ctx, err)
				return
			}
			a.total++
		}
	}
	if err := a.startCheckpoints(); err != nil {
		a.end(ctx, err)
		return
	}
	if a.ckpt != nil {
		if err := a.startSupervision(ctx); err != nil {
			a.end(ctx, err)
			return
		}
	}
	// The ticker runs from the deploy on: a region that fails before the
	// job is first wired must still be restarted after its backoff.
	a.startFlushTicker(ctx)
	a.job.log.Info().Int("tasks", a.total).Msg("job deployed")
}

// spawnTask starts one task instance as a child, restoring from m (nil: fresh).
func (a *jobActor) spawnTask(ctx actor.Context, op *plan.Operator, i int, m *store.Manifest) error {
	return a.spawnTaskNamed(ctx, op, i, m, fmt.Sprintf("%s-%d", op.Name, i))
}

// spawnTaskNamed is spawnTask with the actor's name (a live rescale adds
// instances while removed ones with the same index may still be there).
func (a *jobActor) spawnTaskNamed(ctx actor.Context, op *plan.Operator, i int, m *store.Manifest, name string) error {
	key := taskID(op, i)
	if _, seen := a.gens[key]; seen {
		a.gens[key]++
	} else {
		a.gens[key] = 0
	}
	gen := a.gens[key]
	node, err := a.place(op, i)
	if err != nil {
		return err
	}
	var pid *actor.PID
	if a.isRemote(op.ID, i) {
		if pid, err = a.spawnRemote(ctx, op, i, gen, node, m, name); err != nil {
			return err
		}
	} else {
		props := taskProps(a.job, op, i, gen, m)
		if pid, err = ctx.SpawnNamed(props, name); err != nil {
			return fmt.Errorf("deploy task %s: %w", taskName(op, i), err)
		}
	}
	a.tasks[op.ID][i] = pid
	a.byPID[pid.Id] = taskID(op, i)
	return nil
}

// setReady records whether a task's current incarnation reported ready.
func (a *jobActor) setReady(key taskid.ID, ready bool) {
	if a.readyTasks[key] == ready {
		return
	}
	a.readyTasks[key] = ready
	if ready {
		a.ready++
	} else {
		a.ready--
	}
}

// maybeWireAll wires and starts the whole job once every task is ready, the
// first time.
func (a *jobActor) maybeWireAll(ctx actor.Context) {
	if a.wired || a.ready != a.total {
		return
	}
	a.wired = true
	a.wireTasks(ctx, nil)
	a.job.opts.Cluster.running()
	if a.sv != nil {
		a.startChaos(ctx)
	}
	a.rescaleWired(ctx)
}

// wireTasks connects the given tasks (nil: all) to their output channels and
// starts them. A region is closed under channels, so its producers' consumers
// are in it too.
func (a *jobActor) wireTasks(ctx actor.Context, only []taskid.ID) {
	p := a.job.Plan
	var list []taskid.ID
	if only == nil {
		for _, op := range p.Operators {
			for i := 0; i < op.Parallelism; i++ {
				list = append(list, taskID(op, i))
			}
		}
	} else {
		list = only
	}
	for _, t := range list {
		op, i := p.Operators[t.OperatorID], t.Instance
		outs := make([][]*actor.PID, len(op.Outputs))
		for e, edge := range op.Outputs {
			base := inputBase(edge)
			outs[e] = make([]*actor.PID, edge.To.Parallelism)
			for j := 0; j < edge.To.Parallelism; j++ {
				ch := a.inputs[edge.To.ID][j][base+i]
				outs[e][j] = ch
				ctx.Send(ch, &channelWireMsg{producer: a.tasks[op.ID][i], output: e, channel: j})
			}
		}
		ctx.Send(a.tasks[op.ID][i], &wireMsg{outputs: outs})
	}
	for _, t := range list {
		ctx.Send(a.tasks[t.OperatorID][t.Instance], &startMsg{})
	}
}

// stale reports whether a message comes from an earlier incarnation of a task.
func (a *jobActor) stale(op, instance, gen int) bool {
	return a.gens[a.idOf(op, instance)] != gen
}

// inputBase is the index of edge's first channel among its consumer's inputs.
func inputBase(edge *plan.Edge) int {
	base := 0
	for _, in := range edge.To.Inputs {
		if in == edge {
			return base
		}
		base += in.From.Parallelism
	}
	panic(fmt.Sprintf("edge %s→%s is not an input of %s", edge.From.Name, edge.To.Name, edge.To.Name))
}

// stopSources ends every source's input so the job drains and finishes.
func (a *jobActor) stopSources(ctx actor.Context, reason string) {
	if a.draining || a.stopping {
		return
	}
	a.draining = true
	a.job.log.Info().Str("reason", reason).Msg("stopping job: ending sources")
	for _, op := range a.job.Plan.Operators {
		if op.Kind == plan.KindSource {
			for _, pid := range a.tasks[op.ID] {
				if pid != nil { // nil: stopped for a restart, told on respawn
					ctx.Send(pid, &endInputMsg{})
				}
			}
		}
	}
}

// stopIO stops the checkpoint uploader; idempotent.
func (a *jobActor) stopIO() {
	if a.job.uploads != nil {
		a.job.uploads.stop()
	}
	if a.ckpt != nil && a.ckpt.retirer != nil {
		a.ckpt.retirer.stop()
	}
}

// failure turns a supervisor report into an error naming the task.
func (a *jobActor) failure(m *taskFailedMsg) error {
	name := m.who.Id
	if at, ok := a.byPID[m.who.Id]; ok {
		name = at.String()
	}
	var err error
	switch r := m.reason.(type) {
	case error:
		err = r
	default:
		err = fmt.Errorf("%v", r)
	}
	var tf *TaskError
	if errors.As(err, &tf) {
		return err
	}
	return &TaskError{Task: name, Err: err}
}

// end finishes the job with err and stops the whole subtree.
func (a *jobActor) end(ctx actor.Context, err error) {
	if a.ended {
		return
	}
	a.ended = true
	if err != nil {
		a.job.log.Error().Err(err).Msg("job failed")
	}
	a.stopStopTimer()
	a.stopFlushTicker()
	a.stopChaos()
	a.finishRetires()
	a.stopIO()
	reason := "finished"
	if err != nil {
		reason = err.Error()
	}
	a.stopCluster(ctx, reason)
	a.job.finish(err)
	ctx.Stop(ctx.Self())
}

// startFlushTicker starts the one goroutine that reminds tasks to seal partial
// buffers and drives the checkpoint coordinator's clock. It is owned by the job
// actor and stopped when it stops.
func (a *jobActor) startFlushTicker(ctx actor.Context) {
	if a.job.opts.FlushInterval <= 0 {
		return
	}
	var pids []*actor.PID
	for _, row := range a.tasks {
		pids = append(pids, row...)
	}
	root, self, coord := ctx.ActorSystem().Root, ctx.Self(), a.ckpt != nil
	a.flushTicker = startTicker(a.job.node.quit, a.job.opts.FlushInterval, func() {
		for _, pid := range pids {
			root.Send(pid, flushTick)
		}
		if coord {
			root.Send(self, coordTick)
		}
	})
}

// stopFlushTicker stops the ticker goroutine and waits for it; idempotent.
func (a *jobActor) stopFlushTicker() { a.flushTicker = a.flushTicker.Stop() }

var (
	flushTick = &flushTickMsg{}
	coordTick = &coordTickMsg{}
)

// TaskError is a task's failure, naming the task instance.
type TaskError struct {
	Task string
	Err  error
}

// Error says which task failed and why.
func (e *TaskError) Error() string { return fmt.Sprintf("task %s failed: %v", e.Task, e.Err) }

// Unwrap gives the cause.
func (e *TaskError) Unwrap() error { return e.Err }
