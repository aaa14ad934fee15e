package cli

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/weirstream/weir/actors"
	"github.com/weirstream/weir/cluster"
	"github.com/weirstream/weir/internal/plan"
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
	incarn    map[string]int64 // node → the incarnation (start time) that has the part
	started   time.Time
	lastEvent time.Time
	cancelled atomic.Bool
	duration  time.Duration              // --duration: end the sources after this long
	groups    map[cluster.TaskRef]string // each task's pipeline (see pipelines)
}

// onSubmit takes a job submission from `node submit`.
func (a *agent) onSubmit(m *nats.Msg) {
	var req submitRequest
	if err := decode(m, &req); err != nil {
		a.counters.Malformed.Add(1)
		a.reply(m, submitReply{Error: err.Error()})
		return
	}
	coord, err := a.submit(req)
	if err != nil {
		a.log.Warn().Err(err).Str("job", req.Job).Msg("submission refused")
		a.reply(m, submitReply{Error: err.Error()})
		return
	}
	a.reply(m, submitReply{Coordinator: coord})
}

// submit registers a job and coordinates it from this node.
func (a *agent) submit(req submitRequest) (string, error) {
	spec, _, err := a.buildJob(req.Job, req.Args)
	if err != nil {
		return "", err
	}
	restore := spec.flags.restore
	if !a.claim(req.Job) {
		return "", fmt.Errorf("job %s is already being started or coordinated on node %s", req.Job, a.cfg.ID)
	}
	defer a.unclaim(req.Job)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if rec, _, err := a.jobs.Get(ctx, req.Job); err == nil && rec.State == cluster.JobRunning {
		return "", fmt.Errorf("job %s is already running (coordinator %s); cancel it first", req.Job, rec.Coordinator)
	} else if err != nil && !errors.Is(err, cluster.ErrJobNotFound) {
		return "", fmt.Errorf("job registry: %w", err)
	}
	lease, ok, err := a.leases.Acquire(ctx, req.Job, a.cfg.ID, time.Now(), a.cfg.HeartbeatTimeout)
	if err != nil {
		return "", fmt.Errorf("coordinator lease of job %s: %w", req.Job, err)
	}
	if !ok {
		return "", fmt.Errorf("job %s is coordinated by node %s", req.Job, lease.Node)
	}
	a.acquired(req.Job)
	rec := cluster.JobRecord{Name: req.Job, Args: req.Args, Submitted: time.Now().UnixNano(), State: cluster.JobRunning, Coordinator: a.cfg.ID}
	if _, err := a.jobs.Put(ctx, rec); err != nil {
		a.release(ctx, req.Job)
		return "", fmt.Errorf("register job %s: %w", req.Job, err)
	}
	if err := a.coordinate(req.Job, req.Args, restore, restore == "", lease.Epoch); err != nil {
		a.setUpFailed(rec, err)
		return "", err
	}
	return a.cfg.ID, nil
}

// setUpFailed records that job rec failed to start (or be taken over) here,
// unless this node lost its lease meanwhile (the job is another node's
// then), and gives the lease up.
func (a *agent) setUpFailed(rec cluster.JobRecord, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if !a.holds(rec.Name) || errors.Is(err, errStopping) {
		a.log.Warn().Err(err).Str("job", rec.Name).Msg("stopped setting the job up; its record is left to the next coordinator")
		a.forgetLease(rec.Name)
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
// from ("" for none).
func (a *agent) coordinate(name string, args []string, restore string, fresh bool, epoch uint64) error {
	if ok, highest := a.fence.Admit(name, epoch); !ok {
		return cluster.FencedError(name, epoch, highest)
	}
	spec, p, err := a.buildJob(name, args)
	if err != nil {
		return err
	}
	if err := a.endPart(name); err != nil {
		return err
	}
	rt, err := a.runtimeFor(spec, p, restore, true)
	if err != nil {
		return fmt.Errorf("job %s: %w", name, err)
	}
	var restored uint64
	if m := rt.Checkpoint.Restore; m != nil {
		restored = m.CheckpointID
	}
	placed, nodes, err := a.placeJob(name, p)
	if err != nil {
		return fmt.Errorf("job %s: %w", name, err)
	}
	var used []string
	incarn := map[string]int64{}
	for _, n := range nodes {
		used = append(used, n.Node)
		incarn[n.Node] = n.StartedUnixNano
	}
	for _, node := range used {
		if node == a.cfg.ID {
			continue
		}
		if !a.holds(name) {
			return fmt.Errorf("job %s: %w", name, errLeaseLapsed)
		}
		var r cmdReply
		err := request(a.nc, nodeCmdSubject(node), nodeCmd{Kind: cmdPrepare, Job: name, Args: args,
			Fingerprint: p.Fingerprint(), Coordinator: a.cfg.ID, Epoch: epoch, Restore: restored}, &r, prepareTimeout)
		if err == nil && r.Error != "" {
			err = errors.New(r.Error)
		}
		if err != nil {
			return fmt.Errorf("job %s: prepare node %s: %w", name, node, err)
		}
	}
	if fresh && spec.flags.params.Out != "" {
		if err := truncate(spec.flags.params.Out); err != nil {
			return fmt.Errorf("job %s: %w", name, err)
		}
	}
	cj := &coordJob{name: name, args: args, nodes: used, incarn: incarn, started: time.Now(), duration: spec.flags.duration, groups: pipelines(p)}
	prev := placed
	rt.Cluster = &actors.ClusterOptions{
		Place: func(op *plan.Operator, i int) (string, error) { return a.placeTask(cj, prev, op, i) },
		Nodes: func() []string { return cj.nodes },
		Epoch: epoch,
		Holds: func() bool { return a.holds(name) },
	}
	if !a.holds(name) {
		return fmt.Errorf("job %s: %w", name, errLeaseLapsed)
	}
	job, err := a.node.Submit(p, rt)
	if err != nil {
		return fmt.Errorf("job %s: %w", name, err)
	}
	cj.job = job
	a.mu.Lock()
	a.coord[name] = cj
	a.mu.Unlock()
	a.log.Info().Str("job", name).Int("nodes", len(used)).Str("restore", restore).Uint64("epoch", epoch).Msg("coordinating job")
	a.wg.Add(1)
	go a.watch(cj)
	return nil
}

// pipelines groups the task instances of a job the way Flink's default slot
// sharing does: instance i of every operator of a connected dataflow gets
// the group "<first op>#i", so placement keeps pipeline i (keycount's
// source[i], count[i] and sink[i]) on one node. Records of a forward edge
// then never leave the node, and a key-partitioned edge of parallelism p
// sends only (p-1)/p of its records across nodes.
func pipelines(p *plan.Job) map[cluster.TaskRef]string {
	index := make(map[*plan.Operator]int, len(p.Operators))
	for i, op := range p.Operators {
		index[op] = i
	}
	uf := plan.NewUnionFind(len(p.Operators))
	for _, e := range p.Edges {
		uf.Union(index[e.From], index[e.To])
	}
	groups := map[cluster.TaskRef]string{}
	for i, op := range p.Operators {
		first := p.Operators[uf.Find(i)]
		for inst := 0; inst < op.Parallelism; inst++ {
			groups[cluster.TaskRef{Operator: op.Name, Instance: inst}] = fmt.Sprintf("%s#%d", first.Name, inst)
		}
	}
	return groups
}

// placeTask answers the coordinator's placement question for one task: at
// deploy the initial placement; at a restart the same node while it lives,
// else the live node that already took another task of its pipeline (so a
// dead node's pipeline moves as one), else the live node of the job with the
// most free slots.
func (a *agent) placeTask(cj *coordJob, placed map[cluster.TaskRef]string, op *plan.Operator, i int) (string, error) {
	ref := cluster.TaskRef{Operator: op.Name, Instance: i}
	// Eligible: the live nodes that still run the incarnation that was
	// given a part of the job (a node that restarted has lost its part).
	eligible := map[string]cluster.Heartbeat{}
	for _, hb := range a.alive() {
		if started, ok := cj.incarn[hb.Node]; ok && (hb.Node == a.cfg.ID || started == hb.StartedUnixNano) {
			eligible[hb.Node] = hb
		}
	}
	if node, ok := placed[ref]; ok {
		if _, live := eligible[node]; live || node == a.cfg.ID {
			return node, nil
		}
	}
	free, slots := freeSlots(cj.name, cj.nodes, eligible, placed, ref)
	if node := pipelineNode(cj.groups, placed, ref, free); node != "" {
		placed[ref] = node
		return node, nil
	}
	got, err := cluster.Place([]cluster.TaskRef{ref}, slots, nil)
	if err != nil {
		// Over capacity beats not running: put it on this node.
		a.log.Warn().Err(err).Str("task", ref.String()).Msg("no free slot: placing on the coordinator's node")
		placed[ref] = a.cfg.ID
		return a.cfg.ID, nil
	}
	placed[ref] = got[ref]
	return got[ref], nil
}

// freeSlots are the free slots of the eligible nodes among nodes, for
// placing ref of job: a node's slots less those other jobs use (by its
// heartbeat) and less the other tasks of the job placed on it. The job's
// own tasks count by placement, not by heartbeat: during a region restart
// the tasks that restart (ref among them) still show in the heartbeat.
func freeSlots(job string, nodes []string, eligible map[string]cluster.Heartbeat, placed map[cluster.TaskRef]string, ref cluster.TaskRef) (map[string]int, []cluster.Slot) {
	mine := map[string]int{}
	for peer, node := range placed {
		if peer != ref {
			mine[node]++
		}
	}
	free := map[string]int{}
	var slots []cluster.Slot
	for _, n := range nodes {
		if hb, ok := eligible[n]; ok {
			free[n] = cluster.JobFree(hb, job, mine[n])
			slots = append(slots, cluster.Slot{Node: n, Free: free[n]})
		}
	}
	return free, slots
}

// pipelineNode is the node with a free slot (free lists the eligible nodes)
// that runs another task of ref's pipeline (the smallest id when several
// do), or "".
func pipelineNode(groups, placed map[cluster.TaskRef]string, ref cluster.TaskRef, free map[string]int) string {
	g := groups[ref]
	best := ""
	for peer, node := range placed {
		if peer == ref || g == "" || groups[peer] != g {
			continue
		}
		if free[node] > 0 && (best == "" || node < best) {
			best = node
		}
	}
	return best
}

// watch waits for a coordinated job to end and records how it ended.
func (a *agent) watch(cj *coordJob) {
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
	a.mu.Lock()
	if a.coord[cj.name] == cj {
		delete(a.coord, cj.name)
	}
	a.mu.Unlock()
	if errors.Is(err, actors.ErrAbandoned) {
		a.forgetLease(cj.name)
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
	if !a.holds(cj.name) {
		// The end came after the lease lapsed: another node may coordinate
		// the job by now, and the record is its to write.
		a.log.Warn().Str("job", cj.name).Str("state", state).Msg("job ended after the coordinator lease lapsed: not recorded")
		a.forgetLease(cj.name)
		return
	}
	if _, err := a.jobs.Put(ctx, rec); err != nil {
		a.log.Error().Err(err).Str("job", cj.name).Msg("record the job's end")
	}
	a.release(ctx, cj.name)
	a.publishEvent(ev)
	a.log.Info().Str("job", cj.name).Str("state", state).Msg("job ended")
}

// event is the job's progress as its coordinator sees it.
func (a *agent) event(cj *coordJob, state string) jobEvent {
	ev := jobEvent{Job: cj.name, State: state, Coordinator: a.cfg.ID, ElapsedS: time.Since(cj.started).Seconds()}
	cps := cj.job.Checkpoints()
	ev.Checkpoints = len(cps)
	if len(cps) > 0 {
		ev.Latest = cps[len(cps)-1].ID
	}
	ev.Restarts = cj.job.Supervision().Restarts
	return ev
}

// publishEvent publishes a job event for attached `node submit`s, as a
// weir envelope (so `node inspect` shows it like the job's other messages).
func (a *agent) publishEvent(ev jobEvent) {
	e := &transport.Envelope{Type: transport.TypeControl, Job: ev.Job, From: a.cfg.ID + "#events", Payload: encode(ev)}
	if err := a.pub.Publish(jobEventsSubject(ev.Job), e); err != nil {
		a.log.Warn().Err(err).Str("job", ev.Job).Msg("publish job event")
	}
}

// progressEvery is how often a coordinator publishes a running job's progress.
const progressEvery = 2 * time.Second

// publishProgress publishes the progress of the running jobs every so often.
func (a *agent) publishProgress(now time.Time) {
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
		a.publishEvent(a.event(cj, cluster.JobRunning))
	}
}

// adoptOrphans takes over running jobs whose coordinator is dead (or is
// this node after a restart). The lease decides: one node wins.
func (a *agent) adoptOrphans(now time.Time) {
	a.mu.Lock()
	leaving := a.leaving
	a.mu.Unlock()
	if leaving || now.Sub(a.started) < a.cfg.HeartbeatTimeout {
		return // leaving, or still learning the membership (see waitSettled)
	}
	ctx, cancel := context.WithTimeout(context.Background(), a.cfg.HeartbeatTimeout/2)
	defer cancel()
	recs, err := a.jobs.List(ctx)
	if err != nil {
		a.log.Warn().Err(err).Msg("list jobs")
		return
	}
	for _, rec := range recs {
		if rec.State != cluster.JobRunning {
			continue
		}
		if rec.Coordinator != a.cfg.ID && a.isAlive(rec.Coordinator) {
			continue
		}
		if !a.claim(rec.Name) {
			continue
		}
		// On its own goroutine: a takeover waits for slots and prepares
		// nodes, which must not hold up the agent's clock.
		a.wg.Add(1)
		go func(rec cluster.JobRecord) {
			defer a.wg.Done()
			defer a.unclaim(rec.Name)
			a.adopt(rec)
		}(rec)
	}
}

// adopt takes over one orphaned job if this node wins its lease.
func (a *agent) adopt(rec cluster.JobRecord) {
	ctx, cancel := context.WithTimeout(context.Background(), a.cfg.HeartbeatTimeout/2)
	defer cancel()
	lease, ok, err := a.leases.Acquire(ctx, rec.Name, a.cfg.ID, time.Now(), a.cfg.HeartbeatTimeout)
	if err != nil || !ok {
		return
	}
	a.acquired(rec.Name)
	a.log.Warn().Str("job", rec.Name).Str("old_coordinator", rec.Coordinator).Uint64("epoch", lease.Epoch).
		Msg("taking over the coordination of the job from its latest checkpoint")
	old := rec.Coordinator
	rec.Coordinator = a.cfg.ID
	if _, err := a.jobs.Put(ctx, rec); err != nil {
		a.log.Error().Err(err).Str("job", rec.Name).Msg("record new coordinator")
	}
	restore := "latest"
	if !a.hasCheckpoint(rec.Name) {
		restore = ""
	}
	if err := a.coordinate(rec.Name, rec.Args, restore, false, lease.Epoch); err != nil {
		a.log.Error().Err(err).Str("job", rec.Name).Str("old_coordinator", old).Msg("take over job")
		a.setUpFailed(rec, err)
	}
}

// hasCheckpoint reports whether the job has a completed checkpoint.
func (a *agent) hasCheckpoint(job string) bool {
	st, err := a.jobStore()
	if err != nil {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	m, err := st.Latest(ctx, job)
	return m != nil && (err == nil || errors.Is(err, store.ErrCorrupt))
}

// onCancel stops a job this node coordinates.
func (a *agent) onCancel(m *nats.Msg) {
	var req cancelRequest
	if err := decode(m, &req); err != nil {
		a.counters.Malformed.Add(1)
		return
	}
	a.mu.Lock()
	cj := a.coord[req.Job]
	a.mu.Unlock()
	if cj == nil {
		return // the coordinator answers
	}
	cj.cancelled.Store(true)
	cj.job.Stop("cancelled")
	a.log.Info().Str("job", req.Job).Msg("job cancelled: ending its sources")
	a.reply(m, cmdReply{})
}
