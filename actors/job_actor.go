package actors

import (
	"errors"
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/weirstream/weir/actors/mailbox"
	"github.com/weirstream/weir/internal/plan"
)

// jobActor is a job's coordinator and the supervisor of its tasks. It deploys
// the tasks, wires their channels, starts the sources and watches for the end.
type jobActor struct {
	job *Job

	tasks    [][]*actor.PID   // [operator][instance]
	inputs   [][][]*actor.PID // [operator][instance][input] channel actors
	byPID    map[string][2]int
	ready    int
	finished int
	total    int
	started  time.Time
	ending   bool

	stopTicker chan struct{}
	tickerDone chan struct{}

	ckpt *jobCheckpoints // nil without checkpoints
}

func newJobActor(j *Job) *jobActor {
	return &jobActor{job: j, byPID: map[string][2]int{}}
}

// Receive handles the coordinator's messages.
func (a *jobActor) Receive(ctx actor.Context) {
	if a.onCheckpointMsg(ctx, ctx.Message()) {
		return
	}
	switch m := ctx.Message().(type) {
	case *actor.Started:
		// Tasks may fail while deploying, before Submit has recorded the pid.
		a.job.mu.Lock()
		a.job.pid = ctx.Self()
		a.job.mu.Unlock()
		a.deploy(ctx)
	case *taskReadyMsg:
		a.inputs[m.op][m.instance] = m.inputs
		a.ready++
		if a.ready == a.total {
			a.wire(ctx)
		}
	case *taskFinishedMsg:
		a.finished++
		a.job.log.Debug().Str("task", taskName(a.job.Plan.Operators[m.op], m.instance)).Msg("task finished")
		if a.finished == a.total {
			a.job.log.Info().Dur("took", time.Since(a.started)).Msg("job finished")
			a.end(ctx, nil)
		}
	case *taskFailedMsg:
		a.end(ctx, a.failure(m))
	case *stopJobMsg:
		a.stopSources(ctx, m.reason)
	case *actor.Stopping:
		a.stopFlushTicker()
		a.stopIO()
	}
}

// deploy spawns every task instance as a child.
func (a *jobActor) deploy(ctx actor.Context) {
	a.started = time.Now()
	p := a.job.Plan
	a.tasks = make([][]*actor.PID, len(p.Operators))
	a.inputs = make([][][]*actor.PID, len(p.Operators))
	for _, op := range p.Operators {
		a.tasks[op.ID] = make([]*actor.PID, op.Parallelism)
		a.inputs[op.ID] = make([][]*actor.PID, op.Parallelism)
		for i := 0; i < op.Parallelism; i++ {
			op, i := op, i
			props := actor.PropsFromProducer(func() actor.Actor { return newTask(a.job, op, i) },
				actor.WithMailbox(mailbox.New()),
				actor.WithSupervisor(escalateStrategy{}))
			pid, err := ctx.SpawnNamed(props, fmt.Sprintf("%s-%d", op.Name, i))
			if err != nil {
				a.end(ctx, fmt.Errorf("deploy task %s: %w", taskName(op, i), err))
				return
			}
			a.tasks[op.ID][i] = pid
			a.byPID[pid.Id] = [2]int{op.ID, i}
			a.total++
		}
	}
	if err := a.startCheckpoints(); err != nil {
		a.end(ctx, err)
		return
	}
	a.job.log.Info().Int("tasks", a.total).Msg("job deployed")
}

// wire connects every producer to its channels and starts the sources.
func (a *jobActor) wire(ctx actor.Context) {
	p := a.job.Plan
	for _, op := range p.Operators {
		for i := 0; i < op.Parallelism; i++ {
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
	}
	for _, row := range a.tasks {
		for _, pid := range row {
			ctx.Send(pid, &startMsg{})
		}
	}
	a.startFlushTicker(ctx)
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
	if a.ending {
		return
	}
	a.ending = true
	a.job.log.Info().Str("reason", reason).Msg("stopping job: ending sources")
	for _, op := range a.job.Plan.Operators {
		if op.Kind == plan.KindSource {
			for _, pid := range a.tasks[op.ID] {
				ctx.Send(pid, &endInputMsg{})
			}
		}
	}
}

// stopIO stops the checkpoint uploader; idempotent.
func (a *jobActor) stopIO() {
	if a.job.uploads != nil {
		a.job.uploads.stop()
	}
}

// failure turns a supervisor report into an error naming the task.
func (a *jobActor) failure(m *taskFailedMsg) error {
	name := m.who.Id
	if at, ok := a.byPID[m.who.Id]; ok {
		name = taskName(a.job.Plan.Operators[at[0]], at[1])
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
	if err != nil {
		a.job.log.Error().Err(err).Msg("job failed")
	}
	a.stopFlushTicker()
	a.stopIO()
	a.job.finish(err)
	ctx.Stop(ctx.Self())
}

// startFlushTicker starts the one goroutine that reminds tasks to seal partial
// buffers. It is owned by the job actor and stopped when it stops.
func (a *jobActor) startFlushTicker(ctx actor.Context) {
	if a.job.opts.FlushInterval <= 0 {
		return
	}
	a.stopTicker, a.tickerDone = make(chan struct{}), make(chan struct{})
	var pids []*actor.PID
	for _, row := range a.tasks {
		pids = append(pids, row...)
	}
	root, self, coord := ctx.ActorSystem().Root, ctx.Self(), a.ckpt != nil
	stop, done, every := a.stopTicker, a.tickerDone, a.job.opts.FlushInterval
	go func() {
		defer close(done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				for _, pid := range pids {
					root.Send(pid, flushTick)
				}
				if coord {
					root.Send(self, coordTick)
				}
			}
		}
	}()
}

// stopFlushTicker stops the ticker goroutine and waits for it; idempotent.
func (a *jobActor) stopFlushTicker() {
	if a.stopTicker == nil {
		return
	}
	close(a.stopTicker)
	<-a.tickerDone
	a.stopTicker = nil
}

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
