package actors

import (
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/rs/zerolog"

	"github.com/weirstream/weir/actors/mailbox"
	"github.com/weirstream/weir/barriers"
	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/store"
)

// task is one parallel instance of an operator. It never blocks in Receive: when
// an output has no credit it stops taking input and keeps answering control
// messages.
type task struct {
	job      *Job
	op       *plan.Operator
	instance int
	gen      int // incarnation: 0 at deploy, +1 per restart
	name     string
	log      zerolog.Logger

	inst plan.Instance
	src  plan.Source
	tr   plan.Transform
	sink plan.Sink

	in  inputs
	out outputs

	probe *mailbox.Probe // priority or system messages waiting: yield between parts
	parts partSizer      // records per operator call

	aligner   *barriers.Aligner
	ckpts     map[uint64]*taskCheckpoint // snapshotted, not yet complete, by id
	chains    taskChains                 // key-group chains of incremental checkpoints
	blobs     blobBuffers                // spare buffer of checkpoint blobs
	streamBuf blobBuffers                // spare buffer a streamed snapshot gathers key groups in
	frames    taskFrames                 // where captured buffers are stored, so later checkpoints refer to them (channel_state_frames.go)
	sizes     recordSizes                // for --max-inflight-bytes
	timers    map[uint64]*time.Timer     // alignment timers by checkpoint id
	phase     taskPhase                  // where the task is in its life; moved only by move

	restoreFrom *store.Manifest // checkpoint to restore at start (nil: fresh)
	decode      *restoreDecode  // key groups the restore left encoded, being decoded (nil: none)
	unlistens   []func()        // NATS subscriptions of this task and its channels (cluster)
	resumed     bool            // reported its first input after a restore (once)

	ctr     *taskCounters // figures for /metrics, shared by the task's incarnations
	rs      *taskRescale  // the live rescale this task takes part in (nil: none)
	flowRec *taskFlow     // its records for rescale figures (rescale_flow.go; nil until its first)
	retired retiredInputs // inputs from instances live rescales removed
	// remote are the task's cluster subscriptions that live rescales
	// change (see rescale_cluster_task.go).
	remote rescaleSubs
	late   lateBarriers // inputs whose barrier of a committed rescale is still due

	pumpQueued bool // a pumpMsg is queued
	closedInst bool // the operator instance was closed (once)
	// uncommitted are the checkpoints a two-phase sink snapshotted that
	// have neither completed (and been committed) nor aborted; its
	// instance stays open until they have (closeWhenCommitted).
	uncommitted        map[uint64]bool
	closeWhenCommitted bool
	recordsTaken       int64

	wm taskWatermarks // event time: input watermarks and the one sent on
}

func newTask(j *Job, op *plan.Operator, instance, gen int, restore *store.Manifest) *task {
	name := taskName(op, instance)
	return &task{job: j, op: op, instance: instance, gen: gen, name: name, restoreFrom: restore,
		log: j.log.With().Str("task", name).Logger(), ctr: j.live.task(op.Name, instance)}
}

// taskProps are the props for spawning one task: its mailbox's probe is
// shared with every incarnation the producer makes, so a task can yield to
// priority messages between the records of a buffer.
func taskProps(j *Job, op *plan.Operator, instance, gen int, restore *store.Manifest) *actor.Props {
	probe := &mailbox.Probe{}
	return actor.PropsFromProducer(func() actor.Actor {
		t := newTask(j, op, instance, gen, restore)
		t.probe = probe
		return t
	}, actor.WithMailbox(mailbox.New(mailbox.WithProbe(probe))), actor.WithDispatcher(j.node.dispatcher),
		actor.WithSupervisor(escalateStrategy{}))
}

// Receive handles the task's messages.
func (t *task) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		t.ctr.started()
		t.job.node.tasks.Add(1)
		t.job.tasks.Add(1)
		t.onStarted(ctx)
	case *wireMsg:
		if err := t.out.wire(t, m.outputs); err != nil {
			t.fail(fmt.Errorf("wire outputs: %w", err))
			return
		}
		t.move(evWire)
		t.out.sendEarlyBarriers(ctx)
		t.schedulePump(ctx) // the start may have come first (priority lane)
	case *startMsg:
		t.move(evStart)
		t.schedulePump(ctx)
	case *deliverMsg:
		m.buf.arrived = time.Now()
		t.in.deliver(t, m.input, m.buf)
		t.pump(ctx)
	case *deliverEOSMsg:
		t.in.end(m.input)
		t.pump(ctx)
	case *creditMsg:
		if m.output < 0 || m.output >= len(t.out.edges) || m.channel < 0 {
			// Not an output of this incarnation (a late credit of an earlier
			// run of a job with the same name, whose task had this id, or of
			// an earlier wiring): nothing it could open is ours.
			t.log.Warn().Int("output", m.output).Int("channel", m.channel).Int("outputs", len(t.out.edges)).
				Msg("credit for an output this task does not have: ignored")
			return
		}
		t.out.credit(ctx, m.output, m.channel, m.n)
		t.pump(ctx)
	case *flushTickMsg:
		if t.phase.wired() {
			t.out.flushAll(ctx)
			t.onWatermarkTick(ctx)
		}
	case *pumpMsg:
		t.pumpQueued = false
		t.pump(ctx)
	case *endInputMsg:
		t.endInput(ctx)
	case *finishSourceMsg:
		if t.src != nil {
			t.move(evEndSource)
			t.pump(ctx)
		}
	case *triggerMsg:
		t.onTrigger(ctx, m.id, m.final, m.stop)
	case *barrierOvertakeMsg:
		t.onBarrier(ctx, m.input, m.id, m.lastSeq, true, m.overtaken)
		t.pump(ctx)
	case *barrierInOrderMsg:
		t.in.chans[m.input].barrier = m
		t.handleInOrderBarrier(ctx, m.input)
		t.pump(ctx)
	case *blockedQueueMsg:
		t.onBlockedQueue(ctx, m)
	case *alignTimeoutMsg:
		delete(t.timers, m.id)
		if t.aligner != nil {
			t.carryOut(ctx, t.aligner.OnTimeout(m.id, t.now()), nil)
		}
	case *checkpointDoneMsg:
		t.onCheckpointDone(ctx, m.id)
	case *checkpointAbortMsg:
		t.onCheckpointAbort(ctx, m.id)
	case *decodedMsg:
		t.onDecoded()
	case *chaosPanicMsg:
		panic(fmt.Sprintf("chaos: injected panic in task %s", t.name))
	case *dumpTaskMsg:
		t.dump(m)
	case *linkFailedMsg:
		t.fail(fmt.Errorf("%s", m.reason))
	case *actor.Stopping:
		t.move(evStop)
		t.unlisten(ctx)
	case *actor.Terminated:
		if t.phase.work != workStopping {
			t.fail(fmt.Errorf("input channel %s stopped", m.Who.Id))
		}
	case *actor.Stopped:
		t.ctr.stopped(time.Now())
		t.job.node.tasks.Add(-1)
		t.job.tasks.Add(-1)
		t.stopTimers()
		t.closeInstance()
	default:
		t.onRescaleMsg(ctx, m)
	}
}

// onStarted makes the operator instance and spawns the input channels.
func (t *task) onStarted(ctx actor.Context) {
	inst, err := t.op.New(t.instance)
	if err != nil {
		t.fail(fmt.Errorf("create instance: %w", err))
	}
	t.inst = inst
	switch v := inst.(type) {
	case plan.Source:
		t.src = v
	case plan.Transform:
		t.tr = v
	case plan.Sink:
		t.sink = v
	default:
		t.fail(fmt.Errorf("operator instance %T is neither source, transform nor sink", inst))
	}
	info := plan.TaskInfo{Job: t.job.Plan.Name, Operator: t.op.Name, Instance: t.instance,
		Parallelism: t.op.Parallelism, MaxParallelism: t.job.Plan.MaxParallelism,
		Table: t.op.Table, KeyGroups: t.ownedGroups(),
		Checkpointing: t.job.opts.Checkpoint.Enabled(), Restoring: t.restoreFrom != nil}
	// A sink on a coordinator's node whose lease lapsed opens nothing: its
	// opening and recovery clear staging and roll the output back, which
	// belongs to the coordinator that holds the lease now.
	t.checkLease()
	if err := inst.Open(info); err != nil {
		t.fail(fmt.Errorf("open: %w", err))
	}
	t.startTracking()
	var pids []*actor.PID
	for ei, edge := range t.op.Inputs {
		for j := 0; j < edge.From.Parallelism; j++ {
			input := len(pids)
			name := channelName(edge.From.Name, j, t.name)
			props := actor.PropsFromProducer(func() actor.Actor { return newChannel(t.job, name, ctx.Self(), input) },
				actor.WithMailbox(mailbox.New()), actor.WithDispatcher(t.job.node.dispatcher))
			pid, err := ctx.SpawnNamed(props, fmt.Sprintf("in-%s-%d", edge.From.Name, j))
			if err != nil {
				t.fail(fmt.Errorf("spawn input channel %s: %w", name, err))
			}
			pids = append(pids, pid)
			t.in.add(pid, ei)
			if err := t.listenChannel(pid, edge, j); err != nil {
				t.fail(err)
			}
		}
	}
	if err := t.listenCredits(ctx); err != nil {
		t.fail(err)
	}
	if err := t.newAligner(); err != nil {
		t.fail(err)
	}
	if err := t.restore(ctx); err != nil {
		t.fail(err)
	}
	ctx.Send(ctx.Parent(), &taskReadyMsg{op: t.op.ID, instance: t.instance, gen: t.gen, inputs: pids})
}

// move applies ev to the task's phase; an event the phase cannot take is a
// task failure (a bug, never silently ignored).
func (t *task) move(ev taskEvent) {
	p, err := t.phase.on(ev)
	if err != nil {
		t.fail(err)
	}
	t.phase = p
}

// fail turns an error into a task failure handled by the supervisor.
func (t *task) fail(err error) {
	panic(&TaskError{Task: t.name, Err: err})
}

// schedulePump queues one pumpMsg to continue work after other messages.
func (t *task) schedulePump(ctx actor.Context) {
	if !t.pumpQueued {
		t.pumpQueued = true
		ctx.Send(ctx.Self(), &pumpMsg{})
	}
}

// pumpBudget bounds the buffers a task handles before letting other messages in.
const pumpBudget = 16

// pump does as much work as credit allows, a bounded amount at a time.
func (t *task) pump(ctx actor.Context) {
	if !t.phase.running() {
		return
	}
	for n := 0; n < pumpBudget; n++ {
		if t.out.blocked > 0 {
			return
		}
		if t.src != nil {
			switch t.phase.work {
			case workEnding, workFinishing:
				t.finish(ctx)
				return
			case workIdle:
				return
			}
			t.readSource(ctx)
			if t.probe.Waiting() {
				break // answer the waiting messages, then read on
			}
			continue
		}
		progress, yielded := t.in.processNext(ctx, t)
		if yielded {
			break // answer the waiting messages, then go on
		}
		if !progress {
			if t.in.allEnded() {
				t.finish(ctx)
			}
			return
		}
	}
	t.schedulePump(ctx)
}

// readSource reads up to a batch from the source into the outputs, as many
// records as the part sizer allows, so a trigger or a stop waits for about
// one part of a slow source's batch, not all of it.
func (t *task) readSource(ctx actor.Context) {
	t.out.ctx = ctx
	want := t.parts.size(t.job.opts.BatchSize)
	began := time.Now()
	t.out.beginOrigin(began)
	n, done, err := t.src.Read(want, &t.out)
	t.out.endOrigin()
	took := time.Since(began)
	if n > 0 { // a call that read nothing (an idle source waiting) tells no cost per record
		t.parts.observe(n, took)
	}
	t.ctr.busy(took)
	t.ctr.recordsIn.Add(int64(n))
	if err != nil {
		t.fail(fmt.Errorf("read source at offset %d: %w", t.src.Offset(), err))
	}
	t.job.Metrics.RecordsIn.Add(int64(n))
	if n > 0 {
		t.noteResumed(ctx)
	}
	t.afterSourceRead(ctx)
	if done {
		t.endInput(ctx)
	}
}

// endInput stops a source from reading. With checkpoints it goes idle and waits
// for the final checkpoint before ending its outputs; without, it ends them now.
func (t *task) endInput(ctx actor.Context) {
	if t.src == nil || t.phase.work != workReading {
		return
	}
	t.endOfInputWatermark(ctx)
	if !t.job.opts.Checkpoint.Enabled() {
		t.move(evEndSource)
		t.pump(ctx)
		return
	}
	t.move(evIdle)
	t.out.ctx = ctx
	t.out.flushAll(ctx)
	ctx.Send(ctx.Parent(), &sourceIdleMsg{op: t.op.ID, instance: t.instance, gen: t.gen})
}

// finish runs once every input has ended: the operator finishes, outputs flush
// and end, and the job is told when everything is sent.
func (t *task) finish(ctx actor.Context) {
	if t.rs != nil && t.rs.m.HoldsEnd() {
		return // its part in a rescale first (rescaleCarryOut pumps again)
	}
	if t.phase.work != workFinishing {
		t.move(evFinish)
		t.out.ctx = ctx
		switch {
		case t.tr != nil:
			if err := t.tr.Finish(&t.out); err != nil {
				t.fail(fmt.Errorf("finish: %w", err))
			}
		case t.sink != nil:
			if err := t.sink.Finish(); err != nil {
				t.fail(fmt.Errorf("finish sink: %w", err))
			}
		}
		t.out.endAll(ctx)
	}
	if t.phase.work == workFinishing && t.out.allEnded() {
		t.move(evAllEnded)
		t.closeCommitted()
		ctx.Send(ctx.Parent(), &taskFinishedMsg{op: t.op.ID, instance: t.instance, gen: t.gen})
	}
}

// closeCommitted closes the operator instance once it has finished, unless
// it is a two-phase sink with a checkpoint it snapshotted still to commit:
// then once that checkpoint is committed or aborted. The final
// checkpoint's completion and the end of input it lets the sources send
// travel by different routes (in a cluster, different subjects), so the end
// of input can reach a sink first; closing then would leave it nothing to
// commit with (a JetStream sink's connection is closed).
func (t *task) closeCommitted() {
	if len(t.uncommitted) > 0 {
		t.closeWhenCommitted = true
		return
	}
	t.closeInstance()
}

// snapshottedForCommit records that a two-phase sink snapshotted checkpoint
// id: it is committed when id completes.
func (t *task) snapshottedForCommit(id uint64) {
	if _, ok := t.inst.(plan.TwoPhaseSink); !ok {
		return
	}
	if t.uncommitted == nil {
		t.uncommitted = map[uint64]bool{}
	}
	t.uncommitted[id] = true
}

// settledCommit records that checkpoint id completed (done: every
// checkpoint up to it is committed) or aborted, and closes a finished
// instance that waited for it.
func (t *task) settledCommit(id uint64, done bool) {
	for k := range t.uncommitted {
		if k == id || (done && k < id) {
			delete(t.uncommitted, k)
		}
	}
	if t.closeWhenCommitted && len(t.uncommitted) == 0 {
		t.closeWhenCommitted = false
		t.closeInstance()
	}
}

// closeInstance closes the operator instance once.
func (t *task) closeInstance() {
	if t.inst == nil || t.closedInst {
		return
	}
	t.closedInst = true
	if err := t.inst.Close(); err != nil {
		t.log.Error().Err(err).Msg("close operator instance")
	}
}

// noteResumed tells the job, once, that this task processes input again after
// a restart (the end of its region's recovery time).
func (t *task) noteResumed(ctx actor.Context) {
	if !t.resumed {
		t.resumed = true
		ctx.Send(ctx.Parent(), &taskResumedMsg{op: t.op.ID, instance: t.instance, gen: t.gen})
	}
}
