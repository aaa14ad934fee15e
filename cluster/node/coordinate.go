package node

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/actors"
	"github.com/weirstream/weir/cluster"
	"github.com/weirstream/weir/cluster/coord"
	"github.com/weirstream/weir/cluster/placement"
	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/internal/task"
	"github.com/weirstream/weir/rescale"
	"github.com/weirstream/weir/store"
	"github.com/weirstream/weir/transport"
)

// prepareTimeout bounds how long a node may take to prepare its part of a job.
const prepareTimeout = 30 * time.Second

// coordJob is a job this node coordinates.
type coordJob struct {
	name      string
	args      []string
	job       *actors.Job
	nodes     []string         // nodes with a part of the job
	incarn    map[string]int64 // node → the incarnation (start time) that has the part (under the agent's mu)
	epoch     uint64           // the coordinator lease's epoch
	run       int              // this run of the job (actors.ClusterOptions.Run), the same on every part
	restored  uint64           // the checkpoint the job was restored from at set-up (0: none)
	started   time.Time
	lastEvent time.Time
	cancelled atomic.Bool
	duration  time.Duration      // --duration: end the sources after this long
	groups    map[task.ID]string // each task's pipeline (see placement.Pipelines)
	plan      *plan.Job
	// running is job once it was submitted, for the placement of its
	// restarted tasks (which runs on the job's actors: the first placement
	// comes before job is set).
	running atomic.Pointer[actors.Job]
	tally   restartTally // restarts before this coordinator
}

// onSubmit takes a job submission from `node submit`.
func (a *Agent) onSubmit(m *nats.Msg) {
	var req SubmitRequest
	if err := Decode(m, &req); err != nil {
		a.counters.Malformed.Add(1)
		a.reply(m, SubmitReply{Error: err.Error()})
		return
	}
	coordinator, err := a.Submit(req.Job, req.Args)
	if err != nil {
		a.log.Warn().Err(err).Str("job", req.Job).Msg("submission refused")
		a.reply(m, SubmitReply{Error: err.Error()})
		return
	}
	a.reply(m, SubmitReply{Coordinator: coordinator})
}

// Submit registers job name, built from args by the Config's JobBuilder,
// and coordinates it from this node; it returns once the job runs (or
// failed to start) and names the coordinator.
func (a *Agent) Submit(name string, args []string) (string, error) {
	spec, _, err := a.buildJob(name, args)
	if err != nil {
		return "", err
	}
	restore := spec.Run.Restore
	if !a.claim(name) {
		return "", fmt.Errorf("job %s is already being started or coordinated on node %s", name, a.cfg.ID)
	}
	defer a.unclaim(name)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if rec, _, err := a.jobs.Get(ctx, name); err == nil && rec.State == cluster.JobRunning {
		return "", fmt.Errorf("job %s is already running (coordinator %s); cancel it first", name, rec.Coordinator)
	} else if err != nil && !errors.Is(err, cluster.ErrJobNotFound) {
		return "", fmt.Errorf("job registry: %w", err)
	}
	act, err := a.acquire(ctx, name, time.Now())
	if err != nil {
		return "", fmt.Errorf("coordinator lease of job %s: %w", name, err)
	}
	if act.Kind != coord.Coordinate {
		return "", fmt.Errorf("job %s is %s", name, act.Reason)
	}
	rec := cluster.JobRecord{Name: name, Args: args, Submitted: time.Now().UnixNano(), State: cluster.JobRunning, Coordinator: a.cfg.ID}
	if _, err := a.jobs.Put(ctx, rec); err != nil {
		a.release(ctx, name)
		return "", fmt.Errorf("register job %s: %w", name, err)
	}
	if err := a.coordinate(name, args, restore, restore == "", act.Epoch); err != nil {
		a.setUpFailed(rec, err)
		return "", err
	}
	return a.cfg.ID, nil
}

// setUpFailed hands the failure to start (or take over) job rec here to the
// core: recorded and the lease given up, unless this node lost its lease
// meanwhile (the job is another node's then).
func (a *Agent) setUpFailed(rec cluster.JobRecord, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	a.mu.Lock()
	act := a.core.SetUpFailed(time.Now(), rec.Name, err)
	a.mu.Unlock()
	if act.Kind == coord.Forget {
		a.log.Warn().Err(err).Str("job", rec.Name).Msg("stopped setting the job up; its record is left to the next coordinator")
		return
	}
	rec.State, rec.Error = cluster.JobFailed, err.Error()
	if _, perr := a.jobs.Put(ctx, rec); perr != nil {
		a.log.Warn().Err(perr).Str("job", rec.Name).Msg("record the failed set-up")
	}
	a.release(ctx, rec.Name)
}

// coordinate deploys a job over the live nodes with this node as its
// coordinator at lease epoch epoch; restore names the checkpoint to resume
// from ("" for none). It places the job, prepares the other nodes' parts
// and starts the coordinator, one step at a time as the core decides.
func (a *Agent) coordinate(name string, args []string, restore string, fresh bool, epoch uint64) error {
	if ok, highest := a.fence.Admit(name, epoch); !ok {
		return cluster.FencedError(name, epoch, highest)
	}
	begun := time.Now() // the set-up's steps are logged with their times
	spec, p, err := a.buildJob(name, args)
	if err != nil {
		return err
	}
	if err := a.endPart(name); err != nil {
		return err
	}
	if restore != "" {
		if err := a.awaitHolders(name); err != nil {
			return err
		}
	}
	awaitedAt := time.Now() // the nodes holding the state heard (or the settle period over)
	rt, err := a.runtimeFor(spec, p, restore, true)
	readAt := time.Now() // the checkpoint to restore read
	if err != nil {
		return fmt.Errorf("job %s: %w", name, err)
	}
	var restored uint64
	if m := rt.Checkpoint.Restore; m != nil {
		restored = m.CheckpointID
	}
	// One deploy of the job by this coordinator: its parts act only on its
	// messages, whatever a late message of an earlier run of the same name
	// (even at the same epoch) says. Increasing, also across restarts.
	run := int(time.Now().UnixNano())
	placed, nodes, placedAt, err := a.placeAndPrepare(name, args, p, restored, storedState(rt.Checkpoint.Restore), epoch, run)
	if err != nil {
		return fmt.Errorf("job %s: %w", name, err)
	}
	var used []string
	incarn := map[string]int64{}
	for _, n := range nodes {
		used = append(used, n.Node)
		incarn[n.Node] = n.StartedUnixNano
	}
	preparedAt := time.Now()
	if fresh && spec.Out != "" {
		if err := weir.TruncateOutput(spec.Out); err != nil {
			return fmt.Errorf("job %s: %w", name, err)
		}
	}
	cj := &coordJob{name: name, args: args, nodes: used, incarn: incarn, epoch: epoch, run: run, restored: restored, started: time.Now(),
		duration: spec.Run.Duration, groups: placement.Pipelines(p), plan: p}
	prev := placed
	rt.Cluster = &actors.ClusterOptions{
		Place: func(op *plan.Operator, i int) (string, error) { return a.placeTask(cj, prev, op, i) },
		Nodes: func() []string { return cj.nodes },
		Epoch: epoch,
		Run:   run,
		Holds: func() bool { return a.holds(name) },
		// A live rescale places added instances where their state is.
		Locality: func() rescale.Locality { return a.rescaleLocality(cj) },
		// On the job's actor: publishing does not block (NATS buffers it).
		HoldRescaleCommit: a.cfg.HoldRescaleCommit,
		Running: func() {
			a.publishResumed(JobEvent{Job: name, State: cluster.JobRunning, Coordinator: a.cfg.ID,
				ElapsedS: time.Since(cj.started).Seconds(), Resumed: true})
		},
	}
	if !a.holds(name) {
		return fmt.Errorf("job %s: %w", name, coord.ErrLeaseLapsed)
	}
	job, err := a.node.Submit(p, rt)
	if err != nil {
		return fmt.Errorf("job %s: %w", name, err)
	}
	cj.job = job
	cj.running.Store(job)
	a.mu.Lock()
	a.coord[name] = cj
	a.core.Coordinating(name)
	a.mu.Unlock()
	if hb := a.hb.Load(); hb != nil {
		// The other nodes learn at once that this node coordinates the
		// job, so they probe its connection from now on (a coordinator
		// killed before its next heartbeat is then not found by silence).
		hb.Now()
	}
	a.log.Info().Str("job", name).Int("nodes", len(used)).Str("restore", restore).Uint64("epoch", epoch).Int("run", run).
		Int64("await_holders_ms", awaitedAt.Sub(begun).Milliseconds()).Int64("read_checkpoint_ms", readAt.Sub(awaitedAt).Milliseconds()).Int64("place_ms", placedAt.Sub(readAt).Milliseconds()).
		Int64("prepare_ms", preparedAt.Sub(placedAt).Milliseconds()).Msg("coordinating job")
	a.wg.Add(1)
	go a.watch(cj)
	return nil
}

// placeTask answers the coordinator's placement question for one task (see
// placement.Restart and placement.Eligible).
func (a *Agent) placeTask(cj *coordJob, placed map[task.ID]string, op *plan.Operator, i int) (string, error) {
	ref := placement.TaskID(op, i)
	alive := a.alive()
	a.mu.Lock()
	eligible := placement.Eligible(alive, cj.incarn, a.cfg.ID)
	a.mu.Unlock()
	r := placement.Restart{Job: cj.name, Self: a.cfg.ID, Nodes: cj.nodes, Eligible: eligible, Groups: cj.groups, Placed: placed}
	if ckpt := cj.restorePoint(); ckpt != 0 {
		r.Local = placement.LocalFromHeld(cj.plan, ckpt, alive)
	}
	node, err := r.Place(ref)
	if err != nil {
		a.log.Warn().Err(err).Str("task", ref.String()).Msg("no free slot: placing on the coordinator's node")
	}
	placed[ref] = node
	return node, nil
}

// watch waits for a coordinated job to end and records how it ended.
func (a *Agent) watch(cj *coordJob) {
	defer a.wg.Done()
	var deadline <-chan time.Time
	if cj.duration > 0 {
		t := time.NewTimer(cj.duration)
		defer t.Stop()
		deadline = t.C
	}
	for {
		select {
		case <-a.quit:
			return
		case <-deadline:
			cj.job.Drain(fmt.Sprintf("duration %v elapsed", cj.duration))
			deadline = nil
			continue
		case <-cj.job.Done():
		}
		break
	}
	err := cj.job.Err()
	abandoned := errors.Is(err, actors.ErrAbandoned)
	a.mu.Lock()
	current := a.coord[cj.name] == cj
	if current {
		delete(a.coord, cj.name)
	}
	act := a.core.Ended(time.Now(), cj.name, abandoned)
	a.mu.Unlock()
	if abandoned {
		a.log.Warn().Str("job", cj.name).Err(err).Msg("stopped coordinating")
		return
	}
	state := cluster.JobFinished
	switch {
	case err != nil:
		state = cluster.JobFailed
	case cj.cancelled.Load():
		state = cluster.JobCancelled
	}
	if act.Kind == coord.Forget {
		// The end came after the lease lapsed: another node may coordinate
		// the job by now, and the record is its to write.
		a.log.Warn().Str("job", cj.name).Str("state", state).Msg(act.Reason)
		return
	}
	defer a.unclaim(cj.name) // claimed by Ended until the end is recorded
	ev := a.event(cj, state)
	if err != nil {
		ev.Error = err.Error()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rec, _, gerr := a.jobs.Get(ctx, cj.name)
	if gerr != nil {
		rec = cluster.JobRecord{Name: cj.name, Args: cj.args, Submitted: cj.started.UnixNano()}
	}
	rec.State, rec.Error, rec.Coordinator = state, ev.Error, a.cfg.ID
	rec.Restarts, rec.RestartCauses = cj.restarts()
	if _, err := a.jobs.Put(ctx, rec); err != nil {
		a.log.Error().Err(err).Str("job", cj.name).Msg("record the job's end")
	}
	a.release(ctx, cj.name)
	a.publishEvent(ev)
	a.log.Info().Str("job", cj.name).Str("state", state).Msg("job ended")
}

// event is the job's progress as its coordinator sees it.
func (a *Agent) event(cj *coordJob, state string) JobEvent {
	ev := JobEvent{Job: cj.name, State: state, Coordinator: a.cfg.ID, ElapsedS: time.Since(cj.started).Seconds()}
	cps := cj.job.Checkpoints()
	ev.Checkpoints = len(cps)
	if len(cps) > 0 {
		ev.Latest = cps[len(cps)-1].ID
	}
	ev.Restarts, _ = cj.restarts()
	return ev
}

// publishEvent publishes a job event for attached `node submit`s, as a
// weir envelope (so `node inspect` shows it like the job's other messages).
func (a *Agent) publishEvent(ev JobEvent) {
	e := &transport.Envelope{Type: transport.TypeControl, Job: ev.Job, From: a.cfg.ID + "#events", Payload: Encode(ev)}
	if err := a.pub.Publish(EventsSubject(ev.Job), e); err != nil {
		a.log.Warn().Err(err).Str("job", ev.Job).Msg("publish job event")
	}
}

// publishResumed publishes the moment a job runs (see JobEvent.Resumed) on
// its ResumedSubject.
func (a *Agent) publishResumed(ev JobEvent) {
	e := &transport.Envelope{Type: transport.TypeControl, Job: ev.Job, From: a.cfg.ID + "#events", Payload: Encode(ev)}
	if err := a.pub.Publish(ResumedSubject(ev.Job), e); err != nil {
		a.log.Warn().Err(err).Str("job", ev.Job).Msg("publish job resumed")
	}
}

// progressEvery is how often a coordinator publishes a running job's progress.
const progressEvery = 2 * time.Second

// publishProgress publishes the progress of the running jobs every so often.
func (a *Agent) publishProgress(now time.Time) {
	a.mu.Lock()
	var due []*coordJob
	for _, cj := range a.coord {
		if now.Sub(cj.lastEvent) >= progressEvery {
			cj.lastEvent = now
			due = append(due, cj)
		}
	}
	a.mu.Unlock()
	for _, cj := range due {
		a.persistRestarts(cj)
		a.publishEvent(a.event(cj, cluster.JobRunning))
	}
}

// adoptOrphans lists the job registry for the core, which claims the
// running jobs whose coordinator is dead (or is this node after a restart);
// each is adopted if this node wins its lease.
func (a *Agent) adoptOrphans() {
	ctx, cancel := context.WithTimeout(context.Background(), a.cfg.HeartbeatTimeout/2)
	defer cancel()
	recs, err := a.jobs.List(ctx)
	if err != nil {
		a.log.Warn().Err(err).Msg("list jobs")
		return
	}
	a.mu.Lock()
	acts := a.core.JobRecords(time.Now(), recs)
	a.mu.Unlock()
	byName := make(map[string]cluster.JobRecord, len(recs))
	for _, rec := range recs {
		byName[rec.Name] = rec
	}
	for _, act := range acts {
		// On its own goroutine: a takeover waits for slots and prepares
		// nodes, which must not hold up the agent's clock.
		a.wg.Add(1)
		go func(rec cluster.JobRecord, dead string) {
			defer a.wg.Done()
			defer a.unclaim(rec.Name)
			a.adopt(rec, dead)
		}(byName[act.Job], act.Node)
	}
}

// adopt takes over one orphaned job if this node wins its lease (from
// dead, whose connection closed, even if it has not expired; "": only an
// expired lease).
func (a *Agent) adopt(rec cluster.JobRecord, dead string) {
	ctx, cancel := context.WithTimeout(context.Background(), a.cfg.HeartbeatTimeout/2)
	defer cancel()
	act, err := a.acquireFrom(ctx, rec.Name, dead, time.Now())
	if err != nil || act.Kind != coord.Coordinate {
		return
	}
	// rec was listed before the lease was won: its coordinator may have
	// recorded the job's end and released the lease since. Only the record
	// read under the lease says whether the job still runs.
	cur, _, err := a.jobs.Get(ctx, rec.Name)
	if err != nil || cur.State != cluster.JobRunning {
		a.log.Info().Str("job", rec.Name).Str("state", cur.State).AnErr("read_error", err).
			Msg("not taking the job over: it ended before this node won its lease")
		a.release(ctx, rec.Name)
		return
	}
	if cur.CancelRequested {
		a.endCancelled(ctx, cur)
		return
	}
	rec = cur
	a.log.Warn().Str("job", rec.Name).Str("old_coordinator", rec.Coordinator).Uint64("epoch", act.Epoch).
		Msg("taking over the coordination of the job from its latest checkpoint")
	old := rec.Coordinator
	rec.Coordinator = a.cfg.ID
	if rec.Rescales != nil {
		rec.Rescales = rec.Rescales.Interrupted(old) // it builds the job at the record's parallelisms
	}
	if _, err := a.jobs.Put(ctx, rec); err != nil {
		a.log.Error().Err(err).Str("job", rec.Name).Msg("record new coordinator")
	}
	restore := "latest"
	if !a.hasCheckpoint(rec.Name) {
		restore = ""
	}
	if err := a.coordinate(rec.Name, rec.Args, restore, false, act.Epoch); err != nil {
		a.log.Error().Err(err).Str("job", rec.Name).Str("old_coordinator", old).Msg("take over job")
		a.setUpFailed(rec, err)
		return
	}
	a.tookOver(rec.Name, rec.Restarts, rec.RestartCauses)
}

// placeAndPrepare places job name (p) and prepares its part on every other
// node the placement uses, in turn. A node that does not answer its prepare
// (it died after the membership was read and is not declared dead yet) makes
// the set-up wait and place the job again, on the nodes live then, until the
// placement timeout (see coord.Core.Prepared). It returns the placement, the
// nodes it was made over and when it was made.
func (a *Agent) placeAndPrepare(name string, args []string, p *plan.Job, restored uint64, stored map[string]placement.Stored,
	epoch uint64, run int) (map[task.ID]string, []cluster.Heartbeat, time.Time, error) {
	for {
		placed, nodes, act, err := a.placeJob(name, p, restored, stored)
		if err != nil {
			return nil, nil, time.Time{}, err
		}
		placedAt := time.Now()
		for act.Kind == coord.Prepare {
			var r CmdReply
			err := Request(a.nc, CmdSubject(act.Node), Cmd{Kind: CmdPrepare, Job: name, Args: args,
				Fingerprint: p.Fingerprint(), Coordinator: a.cfg.ID, Epoch: epoch, Run: run, Restore: restored}, &r, prepareTimeout)
			switch {
			case unanswered(err):
				err = fmt.Errorf("%w: %w", coord.ErrUnreachable, err)
			case err == nil && r.Error != "":
				err = errors.New(r.Error)
			}
			a.mu.Lock()
			act = a.core.Prepared(time.Now(), name, act.Node, err)
			a.mu.Unlock()
			if act.Kind == coord.Wait {
				a.log.Warn().Str("job", name).Err(err).Dur("retry_in", act.After).Dur("placement_timeout", a.cfg.PlacementTimeout).
					Msg("a node did not answer the job's prepare: placing the job again")
				if err := a.sleep(act.After); err != nil {
					return nil, nil, time.Time{}, err
				}
			}
		}
		switch act.Kind {
		case coord.GiveUp:
			return nil, nil, time.Time{}, act.Err
		case coord.Wait:
			continue
		}
		return placed, nodes, placedAt, nil
	}
}

// unanswered reports whether a request failed for want of an answer: nobody
// listens on the subject, or nobody answered in time.
func unanswered(err error) bool {
	return errors.Is(err, nats.ErrNoResponders) || errors.Is(err, nats.ErrTimeout)
}

// hasCheckpoint reports whether the job has a completed checkpoint.
func (a *Agent) hasCheckpoint(job string) bool {
	st, err := a.jobStore()
	if err != nil {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	m, err := st.Latest(ctx, job)
	return m != nil && (err == nil || errors.Is(err, store.ErrCorrupt))
}
