package actors

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/weirstream/weir/internal/plan"
	taskid "github.com/weirstream/weir/internal/task"
	"github.com/weirstream/weir/store"
	"github.com/weirstream/weir/supervision"
)

// SupervisionStats are a job's failures, restarts and recovery times.
type SupervisionStats struct {
	Kills    int
	Failures int
	Restarts int
	// Recovery holds, per restart, the time from detecting the failure to the
	// first record processed after the restore.
	Recovery []time.Duration
}

// supervisionLog collects SupervisionStats; safe for any goroutine.
type supervisionLog struct {
	mu sync.Mutex
	s  SupervisionStats
}

func (l *supervisionLog) update(fn func(*SupervisionStats)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fn(&l.s)
}

// Supervision returns the job's failure and recovery figures so far.
func (j *Job) Supervision() SupervisionStats {
	j.supLog.mu.Lock()
	defer j.supLog.mu.Unlock()
	s := j.supLog.s
	s.Recovery = append([]time.Duration(nil), s.Recovery...)
	return s
}

// regionRun is the actor side of one region's restart.
type regionRun struct {
	alive      int  // tasks not yet terminated after StopRegion
	restartDue bool // RestartRegion came; restart once alive == 0 and no manifest is being written
	readying   int  // respawned tasks that have not reported ready
	failedAt   time.Time
	waiting    bool // restarted, waiting for the first processed record
}

// jobSupervision is the job actor's supervision side.
type jobSupervision struct {
	sup      *supervision.Supervisor
	regions  []supervision.Region
	regionOf map[taskid.ID]int
	runs     []regionRun
	expected map[string]bool // task actors we stopped on purpose
	rng      *rand.Rand
	chaos    *ticker
	// killedAt is the newest checkpoint triggered when chaos last killed an
	// actor; the next kill waits for a later checkpoint to complete.
	killedAt uint64
	killed   bool
}

// startSupervision builds the regions and the restart state machine.
func (a *jobActor) startSupervision(ctx actor.Context) error {
	so := a.job.opts.Supervision
	regions := supervision.Regions(a.job.Plan)
	sup, err := supervision.New(supervision.Config{Regions: regions,
		Intensity: supervision.Intensity{MaxRestarts: so.MaxRestarts, Window: so.Window, Backoff: so.Backoff}})
	if err != nil {
		return fmt.Errorf("supervision: %w", err)
	}
	s := &jobSupervision{sup: sup, regions: regions, regionOf: map[taskid.ID]int{}, runs: make([]regionRun, len(regions)),
		expected: map[string]bool{}, rng: rand.New(rand.NewSource(so.ChaosSeed))}
	for _, r := range regions {
		for _, t := range r.Tasks {
			s.regionOf[t] = r.ID
		}
	}
	a.sv = s
	return nil
}

// HandleFailure makes the job actor the supervisor strategy of its tasks: a
// failing task (or its escalated channel) is handled by the restart logic.
func (a *jobActor) HandleFailure(_ *actor.ActorSystem, _ actor.Supervisor, child *actor.PID, _ *actor.RestartStatistics, reason any, _ any) {
	a.ctx.Send(a.ctx.Self(), &taskFailedMsg{who: child, reason: reason})
}

// onFailure decides what a task failure means: restart its region from the
// latest checkpoint, or fail the job.
func (a *jobActor) onFailure(ctx actor.Context, who *actor.PID, reason any) {
	err := a.failure(&taskFailedMsg{who: who, reason: reason})
	at, ok := a.byPID[who.Id]
	if !ok {
		return
	}
	a.job.log.Error().Err(err).Str("task", at.String()).Msg("task failed")
	a.job.supLog.update(func(s *SupervisionStats) { s.Failures++ })
	if a.sv == nil || a.ckpt == nil {
		a.end(ctx, err)
		return
	}
	if a.ckpt.coord.FinalDone() || a.stopping {
		a.failWhileEnding(ctx, err)
		return
	}
	if errors.Is(err, store.ErrCorrupt) {
		// A corrupt checkpoint does not heal by restarting: say so at once.
		a.end(ctx, err)
		return
	}
	r := a.sv.regionOf[at]
	if st, _ := a.sv.sup.State(r); st == supervision.Restoring {
		a.carryOutSupervision(ctx, a.sv.sup.OnRestoreFailed(r, err.Error(), a.job.now()))
		return
	}
	a.carryOutSupervision(ctx, a.sv.sup.OnTaskFailed(at, err.Error(), a.job.now()))
}

// carryOutSupervision performs the restart state machine's actions.
func (a *jobActor) carryOutSupervision(ctx actor.Context, acts []supervision.Action) {
	for _, act := range acts {
		switch act := act.(type) {
		case supervision.StopRegion:
			a.stopRegion(ctx, act.Region, act.Tasks)
		case supervision.RestartRegion:
			a.sv.runs[act.Region].restartDue = true
			a.tryRestart(ctx, act.Region)
		case supervision.FailJob:
			a.end(ctx, fmt.Errorf("job %q failed after too many restarts (keeping its last checkpoint for --restore): task %s[%d]: %s",
				a.job.Plan.Name, act.Task.Operator, act.Task.Instance, act.Cause))
		case supervision.Ignored:
			a.job.log.Debug().Str("reason", act.Reason).Msg("failure report ignored")
		}
	}
}

// stopRegion stops a failed region's tasks (their channels stop with them) and
// aborts the checkpoint they can no longer finish.
func (a *jobActor) stopRegion(ctx actor.Context, region int, tasks []taskid.ID) {
	run := &a.sv.runs[region]
	run.failedAt, run.alive, run.restartDue, run.waiting, run.readying = time.Now(), 0, false, false, 0
	hasSource := false
	for _, t := range tasks {
		// A source counts even if its actor is already gone (stopped or
		// poisoned): its idle report is void and it will read again.
		if a.job.Plan.Operators[t.OperatorID].Kind == plan.KindSource {
			hasSource = true
			delete(a.ckpt.idle, t)
		}
		pid := a.tasks[t.OperatorID][t.Instance]
		if pid == nil {
			continue
		}
		a.sv.expected[pid.Id] = true
		run.alive++
		a.stopTask(ctx, t.OperatorID, t.Instance, pid)
	}
	if hasSource {
		a.ckpt.finalAsked = false
		a.ckpt.coord.CancelFinal()
	}
	a.ckpt.coord.Pause() // no barrier may go to sources being restored
	if id, ok := a.ckpt.coord.Pending(); ok {
		if _, writing := a.ckpt.coord.Writing(); !writing && len(tasks) > 0 {
			t := tasks[0]
			op := a.job.Plan.Operators[t.OperatorID]
			a.carryOutCheckpoint(ctx, a.ckpt.coord.OnDecline(id, taskID(op, t.Instance), "region restarting", a.job.now()))
		}
	}
	a.job.log.Warn().Int("region", region).Int("tasks", len(tasks)).Msg("region stopped for restart")
}

// onTerminated notes a task actor that ended; an unexpected end is a failure.
func (a *jobActor) onTerminated(ctx actor.Context, who *actor.PID) {
	at, ok := a.byPID[who.Id]
	if !ok || a.ended {
		return
	}
	if a.sv != nil && a.sv.expected[who.Id] {
		delete(a.sv.expected, who.Id)
		// The task is gone: a later StopRegion of its region (another
		// failure before the restart) must neither count nor stop it again,
		// and a later node loss must not fail it again.
		a.tasks[at.OperatorID][at.Instance] = nil
		a.setReady(at, false)
		delete(a.byPID, who.Id)
		r := a.sv.regionOf[at]
		a.sv.runs[r].alive--
		a.tryRestart(ctx, r)
		return
	}
	if a.tasks[at.OperatorID][at.Instance] == nil || a.finishedTasks[at] {
		return
	}
	a.tasks[at.OperatorID][at.Instance] = nil
	a.setReady(at, false)
	a.onFailure(ctx, who, errors.New("task actor stopped from outside"))
}

// tryRestart respawns a region once its old tasks are gone and no manifest is
// being written (a manifest in flight decides which checkpoint is the latest).
func (a *jobActor) tryRestart(ctx actor.Context, region int) {
	run := &a.sv.runs[region]
	if !run.restartDue || run.alive > 0 {
		return
	}
	if _, writing := a.ckpt.coord.Writing(); writing {
		return
	}
	run.restartDue = false
	m, err := a.latestManifest()
	if err != nil {
		a.carryOutSupervision(ctx, a.sv.sup.OnRestoreFailed(region, err.Error(), a.job.now()))
		return
	}
	var from uint64
	if m != nil {
		from = m.CheckpointID
	}
	a.job.log.Info().Int("region", region).Uint64("checkpoint", from).Msg("restarting region from the latest checkpoint")
	run.readying = 0
	for _, t := range a.sv.regions[region].Tasks {
		op := a.job.Plan.Operators[t.OperatorID]
		delete(a.byPID, a.pidID(op, t.Instance))
		if err := a.spawnTask(ctx, op, t.Instance, m); err != nil {
			a.carryOutSupervision(ctx, a.sv.sup.OnRestoreFailed(region, err.Error(), a.job.now()))
			return
		}
		run.readying++
	}
}

// pidID is the actor id a task instance runs under.
func (a *jobActor) pidID(op *plan.Operator, instance int) string {
	if pid := a.tasks[op.ID][instance]; pid != nil {
		return pid.Id
	}
	return ""
}

// latestManifest loads the newest completed checkpoint (nil: start over).
func (a *jobActor) latestManifest() (*store.Manifest, error) {
	co := a.job.opts.Checkpoint
	done := a.ckpt.coord.Completed()
	var id uint64
	if len(done) > 0 {
		id = done[len(done)-1]
	}
	if id == 0 || (co.Restore == nil && id < co.FirstID) {
		return nil, nil
	}
	if co.Restore != nil && id == co.Restore.CheckpointID {
		return co.Restore, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), restoreTimeout)
	defer cancel()
	m, err := co.Store.Manifest(ctx, a.job.Plan.Name, id)
	if err != nil {
		return nil, fmt.Errorf("load checkpoint %d: %w", id, err)
	}
	return m, nil
}

// regionReady wires and starts a respawned region once all its tasks are ready.
func (a *jobActor) regionReady(ctx actor.Context, op, instance int) bool {
	if a.sv == nil {
		return false
	}
	r := a.sv.regionOf[a.idOf(op, instance)]
	run := &a.sv.runs[r]
	if run.readying == 0 {
		return false
	}
	run.readying--
	if run.readying > 0 {
		return true
	}
	var tasks []taskid.ID
	for _, t := range a.sv.regions[r].Tasks {
		tasks = append(tasks, t)
	}
	if !a.wired {
		// Restarted before the job was first wired: the whole job is
		// wired together once every task is ready.
		a.maybeWireAll(ctx)
	} else {
		a.wireTasks(ctx, tasks)
	}
	if a.draining && a.wired {
		for _, t := range tasks {
			if a.job.Plan.Operators[t.OperatorID].Kind == plan.KindSource {
				ctx.Send(a.tasks[t.OperatorID][t.Instance], &endInputMsg{})
			}
		}
	}
	run.waiting = true
	a.job.supLog.update(func(s *SupervisionStats) { s.Restarts++ })
	a.carryOutSupervision(ctx, a.sv.sup.OnRegionRestarted(r, a.job.now()))
	if !a.restarting() {
		a.carryOutCheckpoint(ctx, a.ckpt.coord.Resume(a.job.now()))
	}
	return true
}

// onResumed records the recovery time of a region whose task processed input.
func (a *jobActor) onResumed(op, instance int) {
	if a.sv == nil {
		return
	}
	run := &a.sv.runs[a.sv.regionOf[a.idOf(op, instance)]]
	if !run.waiting {
		return
	}
	run.waiting = false
	d := time.Since(run.failedAt)
	a.job.supLog.update(func(s *SupervisionStats) { s.Recovery = append(s.Recovery, d) })
	a.job.log.Info().Dur("recovery", d).Str("task", taskName(a.job.Plan.Operators[op], instance)).Msg("region recovered")
}

// startChaos starts the goroutine that asks for a kill every so often.
func (a *jobActor) startChaos(ctx actor.Context) {
	if every := a.job.opts.Supervision.ChaosKillEvery; every > 0 {
		root, self := ctx.ActorSystem().Root, ctx.Self()
		a.sv.chaos = startTicker(every, func() { root.Send(self, &chaosTickMsg{}) })
	}
}

// stopChaos stops the chaos goroutine; idempotent.
func (a *jobActor) stopChaos() {
	if a.sv != nil {
		a.sv.chaos = a.sv.chaos.Stop()
	}
}

// chaosKill kills one random running task or input channel by Stop, Poison or
// an injected panic. With checkpoints on, a kill waits until a checkpoint
// triggered after the previous kill has completed: every kill then costs at
// most the work since a checkpoint the job could not have taken without
// progress, so a run under chaos always finishes, however slow the machine.
func (a *jobActor) chaosKill(ctx actor.Context) {
	if a.ended || a.stopping || !a.wired || a.restarting() || (a.ckpt != nil && a.ckpt.coord.FinalDone()) {
		return
	}
	if a.ckpt != nil {
		done := a.ckpt.coord.Completed()
		if a.sv.killed && (len(done) == 0 || done[len(done)-1] <= a.sv.killedAt) {
			a.job.log.Debug().Uint64("checkpoint", a.sv.killedAt).Msg("chaos: waiting for a checkpoint after the last kill")
			return
		}
		a.sv.killed, a.sv.killedAt = true, a.ckpt.coord.LastTriggered()
	}
	var victims []*actor.PID
	for _, row := range a.tasks {
		for _, pid := range row {
			if pid != nil && !a.sv.expected[pid.Id] {
				victims = append(victims, pid)
			}
		}
	}
	for op, row := range a.inputs {
		for i, chans := range row {
			if a.tasks[op][i] != nil && !a.sv.expected[a.tasks[op][i].Id] {
				victims = append(victims, chans...)
			}
		}
	}
	if len(victims) == 0 {
		return
	}
	v := victims[a.sv.rng.Intn(len(victims))]
	how := []string{"stop", "poison", "panic"}[a.sv.rng.Intn(3)]
	a.job.log.Warn().Str("victim", v.Id).Str("how", how).Msg("chaos: killing an actor")
	a.job.supLog.update(func(s *SupervisionStats) { s.Kills++ })
	switch how {
	case "stop":
		ctx.Stop(v)
	case "poison":
		ctx.Poison(v)
	default:
		ctx.Send(v, &chaosPanicMsg{})
	}
}

// restarting reports whether any region is stopped or being restored.
func (a *jobActor) restarting() bool {
	if a.sv == nil {
		return false
	}
	for r := range a.sv.regions {
		if st, _ := a.sv.sup.State(r); st != supervision.Running {
			return true
		}
	}
	return false
}
