package actors

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/weirstream/weir/internal/plan"
	taskid "github.com/weirstream/weir/internal/task"
	"github.com/weirstream/weir/rescale"
	"github.com/weirstream/weir/rescale/flow"
	"github.com/weirstream/weir/store"
	"github.com/weirstream/weir/supervision"
)

// jobRescales is the job actor's side of live rescales: the rescale.Coordinator
// machine, the registry of channels (which the rescales make irregular), and
// the rescale running now.
type jobRescales struct {
	seq   uint64
	coord *rescale.Coordinator
	// chans is the channel actor of each (producer, consumer) pair; inputsOf
	// the producer of each input of a consumer, by input index.
	chans    map[chanKey]*actor.PID
	inputsOf map[taskid.ID][]taskid.ID
	run      *liveRescale
	// early are requests that came before the job was wired: they start
	// once it is.
	early []*rescaleRequestMsg
	// restarts is the job's region restarts when the registry was built: a
	// restart respawns the tasks wired as a fresh plan is.
	restarts int
	// retiring are the actors of removed instances: each is stopped once it
	// has finished (its outputs ended), freeing its name.
	retiring map[string]taskid.ID
	// committed is set once a rescale commits; committedAfter is the newest
	// checkpoint triggered before that commit (rescaleUncovered).
	committed      bool
	committedAfter uint64
}

// chanKey names the channel from one task to another.
type chanKey struct{ from, to taskid.ID }

// liveRescale is one rescale in progress.
type liveRescale struct {
	plan      *rescale.Plan
	next      *plan.Job // the plan after the rescale: new tasks run on it
	reply     chan rescaleReply
	began     time.Time
	oldInputs map[taskid.ID]int // inputs each task had before
	spawning  map[taskid.ID]bool
	adding    map[taskid.ID]int // consumer → answers awaited
	added     []taskid.ID       // new tasks, in plan order
	wired     bool
	// begun waits, on a cluster, for every task to have begun its part
	// before the sources get the barrier (rescale_cluster_begin.go).
	begun *begunWait
	// flows are what the changed operators' tasks measured (rescale_flow.go).
	flows []*flow.Task
	// held counts the parts done a test hook keeps from the machine
	// (rescaleHeld).
	held int
}

// rescaleHeld reports whether the test hook ClusterOptions.HoldRescaleCommit
// keeps a task's part done from the machine, so that the rescale never
// commits; once every changed instance's part is done it logs that the
// rescale is held before its commit. The machine then times it out.
func (a *jobActor) rescaleHeld() bool {
	if a.cl == nil || !a.job.opts.Cluster.HoldRescaleCommit {
		return false
	}
	run := a.rs.run
	run.held++
	parts := 0
	for _, c := range run.plan.Changes {
		parts += max(c.From, c.To)
	}
	if run.held == parts {
		a.job.log.Warn().Uint64("rescale", run.plan.Input.Seq).Int("parts", parts).Msg("rescale held before its commit (test hook)")
	}
	return true
}

// onRescaleMsg handles the live-rescale messages; it reports whether m was one.
func (a *jobActor) onRescaleMsg(ctx actor.Context, m any) bool {
	switch m := m.(type) {
	case *rescaleRequestMsg:
		if !a.wired && !a.ended {
			a.rescales().early = append(a.rescales().early, m)
			return true
		}
		if err := a.startRescale(ctx, m); err != nil {
			m.reply <- rescaleReply{err: err}
		}
	case *rescaleInputsAddedMsg:
		a.rescaleInputsAdded(ctx, m)
	case *rescaleBegunMsg:
		a.rescaleBegun(ctx, m)
	case *rescaleDrainedMsg:
		r := a.rescales()
		if r.run == nil || m.seq != r.run.plan.Input.Seq {
			return true // of a rescale an abort ended
		}
		consumer := a.idOf(m.op, m.instance)
		ins := r.inputsOf[consumer]
		if m.input < 0 || m.input >= len(ins) {
			a.end(ctx, fmt.Errorf("rescale: %s reports input %d drained, of %d", consumer, m.input, len(ins)))
			return true
		}
		a.carryOutRescale(ctx, r.coord.InputDrained(a.job.now(), taskKey(consumer), taskKey(ins[m.input])))
	case *rescaleTaskDoneMsg:
		r := a.rescales()
		if r.run == nil || m.seq != r.run.plan.Input.Seq {
			return true // of a rescale an abort ended
		}
		r.run.flows = append(r.run.flows, m.result.Flow)
		if a.rescaleHeld() {
			return true
		}
		acts, err := r.coord.TaskDone(a.job.now(), taskKey(a.idOf(m.op, m.instance)), m.result)
		if err != nil {
			a.end(ctx, fmt.Errorf("rescale: %w", err))
			return true
		}
		a.carryOutRescale(ctx, acts)
	default:
		return false
	}
	return true
}

// rescaleWired starts the requests that came before the job was wired: the
// first one runs, the others are refused as concurrent.
func (a *jobActor) rescaleWired(ctx actor.Context) {
	if a.rs == nil {
		return
	}
	early := a.rs.early
	a.rs.early = nil
	for _, m := range early {
		if err := a.startRescale(ctx, m); err != nil {
			m.reply <- rescaleReply{err: err}
		}
	}
}

func taskKey(t taskid.ID) rescale.TaskKey {
	return rescale.TaskKey{Operator: t.Operator, Instance: t.Instance}
}

// rescales returns the job's rescale side, made on first use.
func (a *jobActor) rescales() *jobRescales {
	if a.rs == nil {
		a.rs = &jobRescales{coord: rescale.NewCoordinator(rescale.CoordinatorConfig{Timeout: rescaleTimeout})}
	}
	return a.rs
}

// rescaleTimeout fails a live rescale that has not committed this long after
// it started (checked on the checkpoint coordinator's ticks).
const rescaleTimeout = 30 * time.Second

// rescaleTick fails a rescale past its timeout: the job restarts from its
// latest checkpoint, as after any failure during a rescale.
func (a *jobActor) rescaleTick(ctx actor.Context) {
	if a.rs == nil || a.rs.run == nil {
		return
	}
	acts := a.rs.coord.Tick(a.job.now())
	if len(acts) == 0 {
		return
	}
	err := errors.New("live rescale timed out")
	a.carryOutRescale(ctx, acts)
	if a.sv != nil && len(a.topo.Tasks) > 0 {
		a.restartAllRegions(ctx, a.topo.Tasks[0], err)
	} else {
		a.end(ctx, err)
	}
}

// rescaleTerminated turns the end of an instance a running rescale added
// (the supervisor does not know it yet) into a failure; it reports whether
// it did.
func (a *jobActor) rescaleTerminated(ctx actor.Context, who *actor.PID, at taskid.ID) bool {
	if a.rs == nil || a.rs.run == nil || !slices.Contains(a.rs.run.added, at) {
		return false
	}
	a.onFailure(ctx, who, errors.New("task actor stopped from outside"))
	return true
}

// startRescale plans a rescale and starts it, or says why it cannot.
func (a *jobActor) startRescale(ctx actor.Context, m *rescaleRequestMsg) error {
	switch {
	case a.ended || a.draining || a.stopping:
		return errors.New("rescale: the job is ending")
	case a.restarting():
		return errors.New("rescale: a region of the job is restarting")
	case a.rescaleInputEnded() != nil:
		return a.rescaleInputEnded()
	}
	r := a.rescales()
	if r.run != nil {
		return fmt.Errorf("rescale: rescale %d is running: %w", r.run.plan.Input.Seq, rescale.ErrRescaleRunning)
	}
	if restarts := a.job.Supervision().Restarts; r.chans == nil || restarts != r.restarts {
		a.registerChannels()
		r.restarts = restarts
	}
	topo, err := a.rescaleTopology()
	if err != nil {
		return err
	}
	in := rescale.Input{Seq: r.seq + 1, Topology: topo, Request: m.targets}
	if a.cl != nil && a.job.opts.Cluster.Locality != nil {
		in.Locality = a.job.opts.Cluster.Locality()
	}
	p, err := rescale.NewPlan(in)
	if err != nil {
		return err
	}
	next := clonePlan(a.job.Plan)
	if err := p.Apply(next); err != nil {
		return err
	}
	r.seq++
	run := &liveRescale{plan: p, next: next, reply: m.reply, began: time.Now(), oldInputs: map[taskid.ID]int{},
		spawning: map[taskid.ID]bool{}, adding: map[taskid.ID]int{}}
	for _, op := range a.job.Plan.Operators {
		for i := 0; i < op.Parallelism; i++ {
			run.oldInputs[taskID(op, i)] = len(r.inputsOf[taskID(op, i)])
		}
	}
	r.run = run
	a.job.log.Info().EmbedObject(p).Msg("rescale planned")
	if a.ckpt != nil {
		if id, ok := a.ckpt.coord.Pending(); ok {
			if err := r.coord.CheckpointStarted(id); err != nil {
				r.run = nil
				return err
			}
		}
	}
	acts, err := r.coord.Start(a.job.now(), p)
	if err != nil {
		r.run = nil
		return err
	}
	if a.ckpt != nil {
		a.ckpt.coord.Pause() // no checkpoint starts until the rescale commits or fails
	}
	if m.planned != nil {
		m.planned <- p
	}
	a.carryOutRescale(ctx, acts)
	return nil
}

// registerChannels records every channel of the job as first wired: input
// base+i of consumer j of an edge comes from producer instance i.
func (a *jobActor) registerChannels() {
	r := a.rescales()
	r.chans, r.inputsOf = map[chanKey]*actor.PID{}, map[taskid.ID][]taskid.ID{}
	for _, op := range a.job.Plan.Operators {
		for j := 0; j < op.Parallelism; j++ {
			to := taskID(op, j)
			for _, e := range op.Inputs {
				base := inputBase(e)
				for i := 0; i < e.From.Parallelism; i++ {
					from := taskID(e.From, i)
					r.chans[chanKey{from, to}] = a.inputs[op.ID][j][base+i]
					r.inputsOf[to] = append(r.inputsOf[to], from)
				}
			}
		}
	}
}

// carryOutRescale performs the coordinator's actions.
func (a *jobActor) carryOutRescale(ctx actor.Context, acts []rescale.Action) {
	r := a.rescales()
	spawned := false
	for _, act := range acts {
		switch act := act.(type) {
		case rescale.Spawn:
			if err := a.rescaleSpawn(ctx, act); err != nil {
				a.end(ctx, err)
				return
			}
			spawned = true
		case rescale.InjectBarrier:
			a.rescaleInject(ctx)
		case rescale.Fence:
			op := r.run.next.Operators[a.opIndex(act.Operator)]
			for _, pid := range a.tasks[op.ID] {
				if pid != nil {
					ctx.Send(pid, &rescaleFenceMsg{from: act.From})
				}
			}
		case rescale.Commit:
			if err := a.rescaleCommit(ctx); err != nil {
				a.end(ctx, fmt.Errorf("rescale %d: commit: %w", act.Rescale, err))
				return
			}
		case rescale.Finished:
			res := act.Result
			res.Flow = flow.Figures(r.run.flows, r.run.began, time.Now())
			ev := a.job.log.Info().Uint64("rescale", res.Rescale).Dur("took", res.Took).Int("moved", res.Moved).
				Int("min_moves", res.Minimum).Int64("bytes", res.Bytes).Dur("longest_pause", res.LongestPause).
				Str("changes", r.run.plan.Summary())
			if res.Flow != nil {
				ev = ev.Object("flow", res.Flow)
			}
			ev.Msg("rescale committed")
			for _, c := range r.run.plan.Changes {
				a.job.node.metrics.RecordRescale(a.job.Plan.Name, c.Operator, res.Took, len(c.Moves))
			}
			detail := fmt.Sprintf("%s: %d key groups moved (fewest possible %d), %d bytes, took %v, longest pause %v",
				r.run.plan.Summary(), res.Moved, res.Minimum, res.Bytes, res.Took, res.LongestPause)
			if res.Flow != nil {
				detail += "; " + res.Flow.String()
			}
			a.job.noteEvent(EventRescale, "", detail)
			a.job.noteRescale(r.run.plan, res)
			r.run.reply <- rescaleReply{result: res}
			r.run = nil
		case rescale.WaitCheckpoint:
			a.job.log.Info().Uint64("checkpoint", act.ID).Msg("rescale waits for the checkpoint")
		case rescale.Abort:
			a.job.log.Warn().Uint64("rescale", act.Rescale).Str("reason", act.Reason).Msg("rescale aborted")
			r.run.reply <- rescaleReply{err: fmt.Errorf("rescale %d aborted: %s", act.Rescale, act.Reason)}
			a.rescaleUnfinish()
			a.rescaleDropAdded(ctx)
			r.run = nil
		case rescale.Refused:
			a.rescaleRefused(ctx, act)
		case rescale.Recover:
			// The failure that aborted the rescale restarts the job
			// (rescaleOnFailure): from its latest checkpoint, old tables.
		}
	}
	if spawned {
		a.rescaleAddInputs(ctx)
	}
}

// opIndex is the plan index of the named operator.
func (a *jobActor) opIndex(name string) int {
	for i, op := range a.job.Plan.Operators {
		if op.Name == name {
			return i
		}
	}
	panic(fmt.Sprintf("no operator %q", name))
}

// rescaleSpawn starts an added instance on the next plan.
func (a *jobActor) rescaleSpawn(ctx actor.Context, act rescale.Spawn) error {
	run := a.rs.run
	op := run.next.Operators[a.opIndex(act.Operator)]
	for len(a.tasks[op.ID]) <= act.Instance {
		a.tasks[op.ID] = append(a.tasks[op.ID], nil)
		a.inputs[op.ID] = append(a.inputs[op.ID], nil)
	}
	name := fmt.Sprintf("%s-%d-r%d", op.Name, act.Instance, run.plan.Input.Seq)
	if err := a.spawnTaskNamed(ctx, op, act.Instance, nil, name); err != nil {
		return fmt.Errorf("rescale: %w", err)
	}
	a.total++
	id := taskID(op, act.Instance)
	// An instance removed by an earlier rescale finished; this one has not.
	delete(a.finishedTasks, id)
	run.spawning[id] = true
	run.added = append(run.added, id)
	return nil
}

// rescaleAddInputs asks every consumer that runs before and after the
// rescale for a channel from each added producer instance.
func (a *jobActor) rescaleAddInputs(ctx actor.Context) {
	run := a.rs.run
	for _, e := range run.next.Edges {
		var producers []int
		for _, id := range run.added {
			if id.Operator == e.From.Name {
				producers = append(producers, id.Instance)
			}
		}
		if len(producers) == 0 {
			continue
		}
		old := a.job.Plan.Operators[e.To.ID].Parallelism
		for j := 0; j < min(old, e.To.Parallelism); j++ {
			to := taskID(e.To, j)
			run.adding[to]++
			ctx.Send(a.tasks[e.To.ID][j], &rescaleAddInputsMsg{seq: run.plan.Input.Seq, edge: inputIndex(e), producers: producers})
		}
	}
}

// rescaleOnReady registers a new task's input channels once it reports
// ready.
func (a *jobActor) rescaleOnReady(ctx actor.Context, m *taskReadyMsg) {
	if a.rs == nil || a.rs.run == nil {
		return
	}
	run := a.rs.run
	id := a.idOf(m.op, m.instance)
	if !run.spawning[id] {
		return
	}
	delete(run.spawning, id)
	op := run.next.Operators[m.op]
	// A new task: an earlier one at its index, removed by a rescale before,
	// had inputs of its own, which are not this one's.
	a.rs.inputsOf[id] = nil
	input := 0
	for _, e := range op.Inputs {
		for i := 0; i < e.From.Parallelism; i++ {
			from := taskID(e.From, i)
			a.rs.chans[chanKey{from, id}] = m.inputs[input]
			a.rs.inputsOf[id] = append(a.rs.inputsOf[id], from)
			input++
		}
	}
	a.rescaleMaybeWire(ctx)
}

// rescaleInputsAdded registers the channels a consumer added.
func (a *jobActor) rescaleInputsAdded(ctx actor.Context, m *rescaleInputsAddedMsg) {
	if a.rs == nil || a.rs.run == nil || m.seq != a.rs.run.plan.Input.Seq {
		return // of a rescale an abort ended
	}
	run := a.rs.run
	to := a.idOf(m.op, m.instance)
	from := run.next.Operators[m.op].Inputs[m.edge].From
	for k, i := range m.producers {
		id := taskID(from, i)
		a.rs.chans[chanKey{id, to}] = m.pids[k]
		a.rs.inputsOf[to] = append(a.rs.inputsOf[to], id)
		a.inputs[m.op][m.instance] = append(a.inputs[m.op][m.instance], m.pids[k])
	}
	run.adding[to]--
	if run.adding[to] == 0 {
		delete(run.adding, to)
	}
	a.rescaleMaybeWire(ctx)
}

// rescaleMaybeWire wires and starts the added tasks once every one is ready
// and every channel to and from them exists, then reports them prepared.
func (a *jobActor) rescaleMaybeWire(ctx actor.Context) {
	run := a.rs.run
	if run.wired || len(run.spawning) > 0 || len(run.adding) > 0 {
		return
	}
	run.wired = true
	isNew := map[taskid.ID]bool{}
	for _, id := range run.added {
		isNew[id] = true
	}
	for _, id := range run.added {
		op := run.next.Operators[id.OperatorID]
		self := a.tasks[op.ID][id.Instance]
		outs := make([][]*actor.PID, len(op.Outputs))
		for e, edge := range op.Outputs {
			for j := 0; j < edge.To.Parallelism; j++ {
				ch := a.rs.chans[chanKey{id, taskID(edge.To, j)}]
				outs[e] = append(outs[e], ch)
				ctx.Send(ch, &channelWireMsg{producer: self, output: e, channel: j})
			}
		}
		ctx.Send(self, &wireMsg{outputs: outs})
		for _, edge := range op.Inputs {
			for i := 0; i < edge.From.Parallelism; i++ {
				from := taskID(edge.From, i)
				if isNew[from] {
					continue // wired as that task's output
				}
				ctx.Send(a.rs.chans[chanKey{from, id}], &channelWireMsg{producer: a.tasks[edge.From.ID][i], output: outputIndex(edge), channel: id.Instance})
			}
		}
	}
	for _, id := range run.added {
		ctx.Send(a.tasks[id.OperatorID][id.Instance], &startMsg{})
	}
	var acts []rescale.Action
	for _, id := range run.added {
		more, err := a.rs.coord.Prepared(a.job.now(), taskKey(id))
		if err != nil {
			a.end(ctx, fmt.Errorf("rescale: %w", err))
			return
		}
		acts = append(acts, more...)
	}
	a.carryOutRescale(ctx, acts)
}

// rescaleInject gives every task its part, then the sources the barrier.
func (a *jobActor) rescaleInject(ctx actor.Context) {
	run := a.rs.run
	p := run.plan
	isNew := map[taskid.ID]bool{}
	for _, id := range run.added {
		isNew[id] = true
	}
	var sources []*actor.PID
	part := a.rescaleParticipants(p)
	for _, op := range run.next.Operators {
		n := max(op.Parallelism, a.job.Plan.Operators[op.ID].Parallelism)
		var peers []*actor.PID
		if _, changed := p.Change(op.Name); changed {
			// A copy: the task reads it on its own goroutine while this
			// actor clears the slots of tasks that end.
			peers = slices.Clone(a.tasks[op.ID][:n])
		}
		for i := 0; i < n; i++ {
			id := taskID(op, i)
			if !part[id] {
				continue // in a region the rescale does not touch
			}
			pid := a.tasks[op.ID][i]
			cfg := rescale.TaskConfigFor(p, op.Name, i, run.oldInputs[id])
			cfg.HoldBytes = a.job.opts.RescaleHoldBytes
			m := &rescaleBeginMsg{cfg: cfg, next: op, plan: p, peers: peers, ack: a.cl != nil}
			if !isNew[id] {
				for _, e := range op.Outputs {
					var pids []*actor.PID
					for j := 0; j < e.To.Parallelism; j++ {
						pids = append(pids, a.rs.chans[chanKey{id, taskID(e.To, j)}])
					}
					m.outputs = append(m.outputs, pids)
				}
			}
			ctx.Send(pid, m)
			if op.Kind == plan.KindSource {
				sources = append(sources, pid)
			}
		}
	}
	if a.cl != nil {
		a.rescaleAwaitBegun(sources, part)
		return
	}
	for _, pid := range sources {
		ctx.Send(pid, &rescaleInjectMsg{})
	}
}

// rescaleCommit makes the rescale's plan the job's: its tables and
// parallelisms, the checkpoint coordinator's and the supervisor's task sets,
// and each task's inputs and outputs without those of removed instances.
func (a *jobActor) rescaleCommit(ctx actor.Context) error {
	run := a.rs.run
	removed := map[taskid.ID]bool{}
	for _, c := range run.plan.Changes {
		for _, i := range c.Removed {
			removed[taskID(a.job.Plan.Operators[a.opIndex(c.Operator)], i)] = true
		}
	}
	if a.rs.retiring == nil {
		a.rs.retiring = map[string]taskid.ID{}
	}
	for id := range removed {
		if pid := a.tasks[id.OperatorID][id.Instance]; pid != nil {
			a.rs.retiring[pid.Id] = id
			if a.finishedTasks[id] {
				a.rescaleStopRetired(ctx, pid)
			}
		}
	}
	if err := run.plan.Apply(a.job.Plan); err != nil {
		return err
	}
	a.rescaleCommitParts(run.plan)
	a.topo = topologyOf(a.job.Plan)
	if a.ckpt != nil {
		a.rs.committed, a.rs.committedAfter = true, a.ckpt.coord.LastTriggered()
		if err := a.ckpt.coord.Rebuild(a.topo.Tasks, a.topo.Sources, a.topo.Sinks); err != nil {
			return err
		}
	}
	if a.sv != nil {
		if err := a.sv.sup.Rebuild(a.topo.Regions); err != nil {
			return err
		}
		for _, id := range run.added {
			a.sv.sup.OnTaskStarted(id, a.gens[id])
		}
	}
	for _, id := range a.topo.Tasks {
		var retired []int
		for i, from := range a.rs.inputsOf[id] {
			if removed[from] {
				retired = append(retired, i)
			}
		}
		ctx.Send(a.tasks[id.OperatorID][id.Instance], &rescaleEndMsg{retired: retired})
	}
	if a.ckpt != nil {
		a.carryOutCheckpoint(ctx, a.ckpt.coord.Resume(a.job.now()))
	}
	return nil
}

// rescaleCheckpointEnded tells the rescale machine that checkpoint id
// completed or was aborted: a rescale waiting for it starts.
func (a *jobActor) rescaleCheckpointEnded(ctx actor.Context, id uint64) {
	if a.rs == nil {
		return
	}
	if a.ckpt != nil && len(a.ckpt.coord.InFlight()) > 0 {
		return // with concurrent checkpoints, a rescale waits for all of them
	}
	if a.ckpt != nil {
		// The one it waits for is the newest triggered (none start meanwhile);
		// it may have ended before older ones.
		id = a.ckpt.coord.LastTriggered()
	}
	a.carryOutRescale(ctx, a.rescaleCheckpointEndedActions(id))
}

// rescaleOnFailure aborts a running rescale on any failure in the job. It
// reports whether it did, or whether a rescale committed since the latest
// checkpoint was triggered (rescaleUncovered); the caller then restarts
// every region from the latest checkpoint, which has the old tables (no
// checkpoint ran since the rescale began).
func (a *jobActor) rescaleOnFailure(ctx actor.Context, reason string) bool {
	if a.rs == nil || a.rs.run == nil {
		return a.rescaleUncovered()
	}
	a.carryOutRescale(ctx, a.rs.coord.Failed(a.job.now(), reason))
	return true
}

// rescaleDropAdded stops the instances an aborted rescale added and forgets
// them and the channels it made; the restart respawns the rest as wired
// from the plan.
func (a *jobActor) rescaleDropAdded(ctx actor.Context) {
	run := a.rs.run
	for _, id := range run.added {
		if pid := a.tasks[id.OperatorID][id.Instance]; pid != nil {
			delete(a.byPID, pid.Id)
			ctx.Stop(pid)
			a.tasks[id.OperatorID][id.Instance] = nil
		}
		a.unplace(id)
		a.setReady(id, false)
		a.total--
	}
	a.rs.chans, a.rs.inputsOf = nil, nil
}

// restartAllRegions restarts every region after a failure during a rescale
// (tasks everywhere took part in it): the failed task's region as it
// failed, each other one as if its first task had.
func (a *jobActor) restartAllRegions(ctx actor.Context, failed taskid.ID, err error) {
	own, known := a.sv.sup.RegionOfTask(failed)
	if st, _ := a.sv.sup.State(own); known && st == supervision.Restoring {
		a.carryOutSupervision(ctx, a.sv.sup.OnRestoreFailed(own, err.Error(), a.job.now()))
	} else if known {
		a.carryOutSupervision(ctx, a.sv.sup.OnTaskFailed(failed, err.Error(), a.job.now()))
	}
	for _, r := range a.topo.Regions {
		if (known && r.ID == own) || len(r.Tasks) == 0 {
			continue
		}
		a.carryOutSupervision(ctx, a.sv.sup.OnTaskFailed(r.Tasks[0], "rescale aborted: "+err.Error(), a.job.now()))
	}
}

// rescaleFinished stops a removed instance once it has finished.
func (a *jobActor) rescaleFinished(ctx actor.Context, op, instance int) {
	if a.rs == nil {
		return
	}
	if pid := a.tasks[op][instance]; pid != nil {
		if _, ok := a.rs.retiring[pid.Id]; ok {
			a.rescaleStopRetired(ctx, pid)
		}
	}
}

// rescaleStopRetired stops a finished removed instance; its end is no
// failure.
func (a *jobActor) rescaleStopRetired(ctx actor.Context, pid *actor.PID) {
	id := a.rs.retiring[pid.Id]
	delete(a.rs.retiring, pid.Id)
	delete(a.byPID, pid.Id)
	if a.tasks[id.OperatorID][id.Instance] == pid {
		a.tasks[id.OperatorID][id.Instance] = nil
		a.unplace(id) // it runs until it has finished (a node lost before fails it)
	}
	ctx.Stop(pid)
}

// rescaleLayoutChannels renumbers the channel state of a task's checkpoint
// from its live input indices, which live rescales leave irregular (inputs
// of removed instances stay, added ones come last), to the plan's layout
// (edge by edge, producer instance by instance), which a restore wires. An
// input of a removed instance carries no channel state.
func (a *jobActor) rescaleLayoutChannels(id taskid.ID, snap *store.TaskSnapshot) error {
	if a.rs == nil || a.rs.inputsOf == nil || len(snap.Channels) == 0 {
		return nil
	}
	op := a.job.Plan.Operators[id.OperatorID]
	ins := a.rs.inputsOf[id]
	for k, cb := range snap.Channels {
		if cb.Input < 0 || cb.Input >= len(ins) {
			return fmt.Errorf("checkpoint of %s: channel state of input %d, of %d", id, cb.Input, len(ins))
		}
		from := ins[cb.Input]
		layout := -1
		for _, e := range op.Inputs {
			if e.From.Name == from.Operator && from.Instance < e.From.Parallelism {
				layout = inputBase(e) + from.Instance
			}
		}
		if layout < 0 {
			return fmt.Errorf("checkpoint of %s: channel state of input %d, from %s, which a rescale removed", id, cb.Input, from)
		}
		snap.Channels[k].Input = layout
	}
	return nil
}
