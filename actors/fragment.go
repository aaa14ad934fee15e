package actors

import (
	"context"
	"fmt"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/weirstream/weir/actors/mailbox"
	"github.com/weirstream/weir/internal/plan"
	taskid "github.com/weirstream/weir/internal/task"
	"github.com/weirstream/weir/transport"
)

// fragment is a job's part on a node that does not run its coordinator: the
// parent of the job's tasks placed here. It starts and stops them when the
// coordinator asks, reports their failures and ends, and forwards what they
// tell their parent to the coordinator.
type fragment struct {
	job    *Job
	r      *Remote
	coord  *actor.PID // stand-in for the coordinator (from the latest spawn request)
	run    int        // the run of the job this part belongs to (0: not known yet)
	tasks  map[taskid.ID]*fragTask
	byID   map[string]taskid.ID
	queued map[taskid.ID]*spawnTaskMsg
	unsub  func()
	flush  *ticker
	ctx    actor.Context
	ended  bool
	ready  chan error // gets the outcome of subscribing, once
}

// fragTask is a task instance running in a fragment.
type fragTask struct {
	pid   *actor.PID
	token int
}

// StartFragment starts the part of job p that runs on this node, under its
// node actor, listening for the coordinator's requests. The node must have a
// Remote attached. opts are the job's options as the coordinator uses them.
func (n *Node) StartFragment(p *plan.Job, opts Options) (*Job, error) {
	if n.remote == nil {
		return nil, fmt.Errorf("start part of job %q: the node is not in a cluster", p.Name)
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("invalid job: %w", err)
	}
	o, err := opts.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("job %q: %w", p.Name, err)
	}
	j := n.newJob(p, o)
	if o.Checkpoint.Enabled() {
		j.uploads = newUploader(n.quit, 2, 64, o.Checkpoint.Timeout)
	}
	f := &fragment{job: j, r: n.remote, run: o.Cluster.runOf(), tasks: map[taskid.ID]*fragTask{}, byID: map[string]taskid.ID{}, queued: map[taskid.ID]*spawnTaskMsg{},
		ready: make(chan error, 1)}
	reply := make(chan error, 1)
	props := actor.PropsFromProducer(func() actor.Actor { return f }, actor.WithMailbox(mailbox.New()), actor.WithSupervisor(f))
	n.system.Root.Send(n.pid, &spawnJobMsg{job: j, props: props, reply: reply})
	if err := <-reply; err != nil {
		return nil, err
	}
	// The coordinator sends its requests as soon as this returns: be
	// subscribed by then.
	if err := <-f.ready; err != nil {
		return nil, err
	}
	return j, nil
}

// HandleFailure is the fragment's supervisor strategy: a failing task is
// reported to the coordinator, which decides the restart.
func (f *fragment) HandleFailure(_ *actor.ActorSystem, _ actor.Supervisor, child *actor.PID, _ *actor.RestartStatistics, reason any, _ any) {
	f.ctx.Send(f.ctx.Self(), &taskFailedMsg{who: child, reason: reason})
}

// Receive handles the coordinator's requests and the tasks' reports.
func (f *fragment) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		f.ctx = ctx
		f.r.addJob(f.job)
		f.r.register(ctx.Self(), WireRef{Kind: refJob})
		unsub, err := f.r.listen(f.job.Plan.Name, transport.ControlSubject(f.job.Plan.Name, f.r.node), ctx.Self())
		if err == nil {
			err = f.r.nc.Flush()
		}
		f.ready <- err
		if err != nil {
			f.end(ctx, err)
			return
		}
		f.unsub = unsub
		if d := f.job.opts.FlushInterval; d > 0 {
			root, self := ctx.ActorSystem().Root, ctx.Self()
			f.flush = startTicker(f.job.node.quit, d, func() { root.Send(self, flushTick) })
		}
		f.job.log.Info().Msg("job part ready on this node")
	case *flushTickMsg:
		for _, t := range f.tasks {
			ctx.Send(t.pid, m)
		}
	case *spawnTaskMsg:
		if f.run == 0 {
			f.run = m.run // a part not told its run takes the first spawn's
		}
		if !f.ofThisRun(m.run, "spawn request") {
			return
		}
		f.coord = m.coordinator
		key := f.idOf(m.op, m.instance)
		if old, ok := f.tasks[key]; ok {
			f.queued[key] = m
			ctx.Stop(old.pid)
			return
		}
		f.spawn(ctx, m)
	case *stopTaskMsg:
		f.job.log.Debug().Int("operator", m.op).Int("instance", m.instance).Msg("coordinator asks to stop a task")
		// Only the incarnation the request names: a late stop from an old
		// coordinator must not stop the task a new one started.
		key := f.idOf(m.op, m.instance)
		if q, ok := f.queued[key]; ok && q.token == m.token {
			delete(f.queued, key)
		}
		if t, ok := f.tasks[key]; ok && t.token == m.token {
			ctx.Stop(t.pid)
			return
		}
		f.toCoordinator(ctx, &remoteTerminatedMsg{op: m.op, instance: m.instance, token: m.token})
	case *actor.Terminated:
		key, ok := f.byID[m.Who.Id]
		if !ok {
			return
		}
		t := f.tasks[key]
		if t == nil || !t.pid.Equal(m.Who) {
			return
		}
		delete(f.tasks, key)
		delete(f.byID, m.Who.Id)
		f.job.log.Debug().Int("operator", key.OperatorID).Int("instance", key.Instance).Msg("task ended on this node")
		f.toCoordinator(ctx, &remoteTerminatedMsg{op: key.OperatorID, instance: key.Instance, token: t.token})
		if q, ok := f.queued[key]; ok {
			delete(f.queued, key)
			f.spawn(ctx, q)
		}
	case *taskReadyMsg, *sourceIdleMsg, *taskFinishedMsg, *taskResumedMsg, *taskAckMsg, *taskDeclineMsg, *taskFailedMsg,
		*sinkCommittedMsg, *rescaleInputsAddedMsg, *rescaleDrainedMsg, *rescaleTaskDoneMsg, *rescaleBegunMsg:
		f.toCoordinator(ctx, m)
	case *rescaleCommitPartMsg:
		f.rescaleCommitPart(ctx, m)
	case *dumpJobMsg:
		f.dump(m)
	case *pruneMsg:
		if f.ofThisRun(m.run, "checkpoint deletion") {
			f.prune(m.ids)
		}
	case *linkFailedMsg:
		// A control message to this node may be lost: fail every task here.
		for _, t := range f.tasks {
			ctx.Send(t.pid, m)
		}
	case *endFragmentMsg:
		if !f.ofThisRun(m.run, "end of the job") {
			return
		}
		f.job.log.Info().Str("reason", m.reason).Msg("job over: stopping its part on this node")
		f.end(ctx, nil)
	case *actor.Stopping:
		f.flush = f.flush.Stop()
		if f.unsub != nil {
			f.unsub()
		}
	case *actor.Stopped:
		// The tasks are gone by now.
		if f.job.uploads != nil {
			f.job.uploads.stop()
		}
		f.r.unregister(ctx.Self())
		f.r.removeJob(f.job)
		f.r.stopProxies(f.job)
		f.job.finish(nil)
	}
}

// spawn starts a task instance as a child.
func (f *fragment) spawn(ctx actor.Context, m *spawnTaskMsg) {
	op, err := f.spawnOperator(m)
	if err != nil {
		f.job.log.Error().Err(err).Int("operator", m.op).Int("instance", m.instance).Msg("spawn request refused")
		return
	}
	props := taskProps(f.job, op, m.instance, m.gen, m.manifest)
	pid, err := ctx.SpawnNamed(props, fmt.Sprintf("%s-%d", op.Name, m.instance))
	if err != nil {
		f.toCoordinator(ctx, &taskFailedMsg{who: actor.NewPID(ctx.Self().Address, ctx.Self().Id+fmt.Sprintf("/%s-%d", op.Name, m.instance)),
			reason: fmt.Errorf("deploy task %s on node %s: %w", taskName(op, m.instance), f.r.node, err)})
		return
	}
	key := f.idOf(m.op, m.instance)
	f.tasks[key] = &fragTask{pid: pid, token: m.token}
	f.byID[pid.Id] = key
	f.job.log.Debug().Str("task", taskName(op, m.instance)).Int("gen", m.gen).Msg("task started on this node")
}

// ofThisRun reports whether a job-level message of run (0: unstamped) is
// for this part: a part acts only on its own run's messages, so a late one
// from an earlier run of a job with the same name, or an early one from a
// later run, is logged and ignored. A part that does not know its run yet
// acts on every message.
func (f *fragment) ofThisRun(run int, what string) bool {
	if run == 0 || f.run == 0 || run == f.run {
		return true
	}
	f.job.log.Debug().Str("request", what).Int("run", run).Int("part_run", f.run).
		Msg("message of another run of the job: ignored")
	return false
}

// toCoordinator forwards m to the coordinator.
func (f *fragment) toCoordinator(ctx actor.Context, m any) {
	if f.coord == nil {
		f.job.log.Warn().Str("msg_type", fmt.Sprintf("%T", m)).Msg("no coordinator known yet: dropped")
		return
	}
	ctx.Send(f.coord, m)
}

// end stops the fragment and its tasks.
func (f *fragment) end(ctx actor.Context, err error) {
	if f.ended {
		return
	}
	f.ended = true
	if err != nil {
		f.job.log.Error().Err(err).Msg("job part failed on this node")
		f.job.finish(err)
	}
	ctx.Stop(ctx.Self())
}

// StopPart stops this node's part of a job (its tasks) without touching the
// rest of the job; Done is closed once its tasks are gone.
func (j *Job) StopPart(reason string) { j.send(&endFragmentMsg{reason: reason}) }

// prune drops this node's local copies of deleted checkpoints, off the
// actor's goroutine.
func (f *fragment) prune(ids []uint64) {
	lp, ok := f.job.opts.Checkpoint.Store.(LocalPruner)
	if !ok || f.job.uploads == nil {
		return
	}
	job, log := f.job.Plan.Name, f.job.log
	f.job.uploads.submit(func(c context.Context) {
		if err := lp.PruneLocal(c, job, ids); err != nil {
			log.Warn().Err(err).Msg("drop local copies of old checkpoints")
		}
	})
}
