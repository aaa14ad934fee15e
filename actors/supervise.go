package actors

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand"
	"slices"
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
	// Causes counts the restarts by cause (metrics.Cause*).
	Causes map[string]int
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
	s.Causes = maps.Clone(s.Causes)
	return s
}

// jobSupervision is the job actor's supervision side: the restart state
// machine, whose actions the actor carries out, and the chaos killer.
type jobSupervision struct {
	sup   *supervision.Supervisor
	rng   *rand.Rand
	chaos *ticker
	// killedAt is the newest checkpoint triggered when chaos last killed an
	// actor; the next kill waits for a later checkpoint to complete.
	killedAt uint64
	killed   bool
	// chaosPending says a chaos kill has not been seen failing yet.
	chaosPending bool
	causes       map[int]string // region → why it is restarting
}

// startSupervision builds the regions and the restart state machine, and
// tells it which incarnation of each task was deployed.
func (a *jobActor) startSupervision(ctx actor.Context) error {
	so := a.job.opts.Supervision
	regions := a.topo.Regions
	var latest uint64
	if r := a.job.opts.Checkpoint.Restore; r != nil {
		latest = r.CheckpointID
	}
	sup, err := supervision.New(supervision.Config{Regions: regions, Latest: latest,
		Intensity: supervision.Intensity{MaxRestarts: so.MaxRestarts, Window: so.Window, Backoff: so.Backoff}})
	if err != nil {
		return fmt.Errorf("supervision: %w", err)
	}
	for _, r := range regions {
		for _, t := range r.Tasks {
			if a.tasks[t.OperatorID][t.Instance] != nil {
				sup.OnTaskStarted(t, a.gens[t])
			}
		}
	}
	a.sv = &jobSupervision{sup: sup, rng: rand.New(rand.NewSource(so.ChaosSeed))}
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
	if a.ended {
		// Over, or abandoned because the lease lapsed: nothing restarts. A
		// region restarted here would respawn this node's sink, whose
		// recovery rolls the shared output back under the coordinator that
		// owns it now.
		a.job.log.Debug().Err(err).Msg("task failed after the job ended here: not restarted")
		return
	}
	at, ok := a.byPID[who.Id]
	if !ok {
		return
	}
	a.job.log.Error().Err(err).Str("task", at.String()).Msg("task failed")
	a.job.supLog.update(func(s *SupervisionStats) { s.Failures++ })
	a.job.noteEvent(EventFailure, at.String(), err.Error())
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
	if a.rescaleOnFailure(ctx, err.Error()) {
		a.restartAllRegions(ctx, at, err)
		return
	}
	r, _ := a.sv.sup.RegionOfTask(at)
	a.sv.noteCause(r, restartCause(err, a.sv.chaosPending))
	a.sv.chaosPending = false
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
			a.stopRegion(ctx, act)
		case supervision.StopLocally:
			if pid := a.tasks[act.Task.OperatorID][act.Task.Instance]; pid != nil {
				ctx.Stop(pid)
			}
		case supervision.RestartRegion:
			a.restartRegion(ctx, act)
		case supervision.RegionReady:
			a.regionRunning(ctx, act)
		case supervision.RecordRecovery:
			a.job.supLog.update(func(s *SupervisionStats) { s.Recovery = append(s.Recovery, act.Took) })
			a.job.node.metrics.ObserveRecovery(a.job.Plan.Name, act.Took)
			a.job.log.Info().Dur("recovery", act.Took).Str("task", act.Task.String()).Int("region", act.Region).Msg("region recovered")
		case supervision.FailJob:
			a.end(ctx, fmt.Errorf("job %q failed after too many restarts (keeping its last checkpoint for --restore): task %v: %s",
				a.job.Plan.Name, act.Task, act.Cause))
		case supervision.Ignored:
			a.job.log.Debug().Str("reason", act.Reason).Msg("supervision event ignored")
		}
	}
}

// stopRegion stops a failed region's running tasks (their channels stop with
// them) and aborts the checkpoint they can no longer finish.
func (a *jobActor) stopRegion(ctx actor.Context, act supervision.StopRegion) {
	// A source counts even if its actor is already gone (stopped or
	// poisoned): its idle report is void and it will read again. Its
	// generation is bumped only when it is respawned, so until then an idle
	// report it sent before it stopped is ignored by the coordinator, not
	// by the generation check.
	a.ckpt.coord.OnSourcesRestarting(act.Tasks)
	for _, t := range act.Alive {
		if pid := a.tasks[t.OperatorID][t.Instance]; pid != nil {
			a.stopTask(ctx, t, pid, slices.Contains(act.Lost, t))
		}
	}
	a.ckpt.coord.Pause() // no barrier may go to sources being restored
	if len(act.Tasks) > 0 {
		for _, id := range a.ckpt.coord.Collecting() {
			a.carryOutCheckpoint(ctx, a.ckpt.coord.OnDecline(id, act.Tasks[0], "region restarting", a.job.now()))
		}
	}
	a.job.log.Warn().Int("region", act.Region).Int("tasks", len(act.Tasks)).Int("stopping", len(act.Alive)).Msg("region stopped for restart")
}

// onTerminated notes a task actor that ended; an unexpected end is a failure.
func (a *jobActor) onTerminated(ctx actor.Context, who *actor.PID) {
	at, ok := a.byPID[who.Id]
	if !ok || a.ended {
		return
	}
	if a.rescaleTerminated(ctx, who, at) {
		return
	}
	if a.sv != nil {
		acts, end := a.sv.sup.OnTaskEnded(at, a.gens[at])
		switch end {
		case supervision.EndStale:
			a.carryOutSupervision(ctx, acts)
			return
		case supervision.EndStopped:
			// The task is gone: a later StopRegion of its region (another
			// failure before the restart) must neither count nor stop it
			// again, and a later node loss must not fail it again.
			a.tasks[at.OperatorID][at.Instance] = nil
			a.setReady(at, false)
			delete(a.byPID, who.Id)
			a.carryOutSupervision(ctx, acts)
			return
		}
	}
	if a.tasks[at.OperatorID][at.Instance] == nil || a.finishedTasks[at] {
		return
	}
	a.tasks[at.OperatorID][at.Instance] = nil
	a.setReady(at, false)
	a.onFailure(ctx, who, errors.New("task actor stopped from outside"))
}

// restartRegion respawns a region from the checkpoint the state machine names.
func (a *jobActor) restartRegion(ctx actor.Context, act supervision.RestartRegion) {
	if a.ended {
		return // over or abandoned: nothing respawns
	}
	m, err := a.manifest(act.Checkpoint)
	if err != nil {
		a.carryOutSupervision(ctx, a.sv.sup.OnRestoreFailed(act.Region, err.Error(), a.job.now()))
		return
	}
	a.job.log.Info().Int("region", act.Region).Uint64("checkpoint", act.Checkpoint).Int("attempt", act.Attempt).Msg("restarting region from the latest checkpoint")
	for _, t := range act.Tasks {
		op := a.job.Plan.Operators[t.OperatorID]
		delete(a.byPID, a.pidID(op, t.Instance))
		if err := a.spawnTask(ctx, op, t.Instance, m); err != nil {
			a.carryOutSupervision(ctx, a.sv.sup.OnRestoreFailed(act.Region, err.Error(), a.job.now()))
			return
		}
		a.sv.sup.OnTaskStarted(t, a.gens[t])
	}
	// The respawned sources' idle reports count again; until now any came
	// from the stopped incarnations (see stopRegion).
	a.ckpt.coord.OnSourcesRestarted(act.Tasks)
}

// pidID is the actor id a task instance runs under.
func (a *jobActor) pidID(op *plan.Operator, instance int) string {
	if pid := a.tasks[op.ID][instance]; pid != nil {
		return pid.Id
	}
	return ""
}

// manifest loads checkpoint id's manifest (id 0: nil, start over).
func (a *jobActor) manifest(id uint64) (*store.Manifest, error) {
	co := a.job.opts.Checkpoint
	if id == 0 {
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

// regionReady tells the state machine a task is ready; it reports whether
// the task belongs to a region being restored.
func (a *jobActor) regionReady(ctx actor.Context, t taskid.ID) bool {
	if a.sv == nil {
		return false
	}
	acts, restoring := a.sv.sup.OnTaskReady(t, a.job.now())
	a.carryOutSupervision(ctx, acts)
	return restoring
}

// regionRunning wires and starts a respawned region whose tasks are all ready.
func (a *jobActor) regionRunning(ctx actor.Context, act supervision.RegionReady) {
	if !a.wired {
		// Restarted before the job was first wired: the whole job is
		// wired together once every task is ready.
		a.maybeWireAll(ctx)
	} else {
		a.wireTasks(ctx, act.Tasks)
		a.job.opts.Cluster.running()
	}
	if a.draining && a.wired {
		for _, t := range act.Tasks {
			if a.job.Plan.Operators[t.OperatorID].Kind == plan.KindSource {
				ctx.Send(a.tasks[t.OperatorID][t.Instance], &endInputMsg{})
			}
		}
	}
	cause := a.sv.takeCause(act.Region)
	a.job.supLog.update(func(s *SupervisionStats) {
		s.Restarts++
		if s.Causes == nil {
			s.Causes = map[string]int{}
		}
		s.Causes[cause]++
	})
	a.job.node.metrics.CountRestart(a.job.Plan.Name, cause)
	a.job.noteEvent(EventRestart, "", fmt.Sprintf("region of %d tasks (%s)", len(act.Tasks), cause))
	if !a.restarting() {
		a.carryOutCheckpoint(ctx, a.ckpt.coord.Resume(a.job.now()))
	}
}

// onResumed tells the state machine a task processed input (the end of a
// region's recovery time).
func (a *jobActor) onResumed(ctx actor.Context, op, instance int) {
	if a.sv != nil {
		a.carryOutSupervision(ctx, a.sv.sup.OnFirstRecord(a.idOf(op, instance), a.job.now()))
	}
}

// startChaos starts the goroutine that asks for a kill every so often.
func (a *jobActor) startChaos(ctx actor.Context) {
	if every := a.job.opts.Supervision.ChaosKillEvery; every > 0 {
		root, self := ctx.ActorSystem().Root, ctx.Self()
		a.sv.chaos = startTicker(a.job.node.quit, every, func() { root.Send(self, &chaosTickMsg{}) })
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
// Once every source is done (the final checkpoint is requested) nothing is
// killed: a task that acknowledged the final checkpoint and is killed before
// it completes reports its failure after it, when a failure ends the run.
func (a *jobActor) chaosKill(ctx actor.Context) {
	if a.ended || a.stopping || !a.wired || a.restarting() || (a.ckpt != nil && (a.ckpt.coord.FinalDone() || a.sourcesDone())) {
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
	for op, row := range a.tasks {
		for i, pid := range row {
			if pid != nil && !a.sv.sup.Stopping(a.idOf(op, i)) {
				victims = append(victims, pid)
				victims = append(victims, a.inputs[op][i]...)
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
	a.job.noteEvent(EventKill, v.Id, how)
	a.sv.chaosPending = true
	switch how {
	case "stop":
		ctx.Stop(v)
	case "poison":
		ctx.Poison(v)
	default:
		ctx.Send(v, &chaosPanicMsg{})
	}
}

// sourcesDone reports whether every source instance waits for the final
// checkpoint.
func (a *jobActor) sourcesDone() bool {
	n := 0
	for _, op := range a.job.Plan.Operators {
		if op.Kind == plan.KindSource {
			n += len(a.tasks[op.ID])
		}
	}
	return n > 0 && a.ckpt.coord.IdleSources() >= n
}

// restarting reports whether any region is stopped or being restored.
func (a *jobActor) restarting() bool { return a.sv != nil && a.sv.sup.Restarting() }
