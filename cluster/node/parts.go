package node

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/actors"
	"github.com/weirstream/weir/cluster"
	"github.com/weirstream/weir/internal/graphplan"
	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/store"
)

// clusterBatchSize is the default batch size of jobs on a cluster.
const clusterBatchSize = 4096

// partStopTimeout bounds the wait for an old part of a job to stop.
const partStopTimeout = 10 * time.Second

// onNodeCmd handles requests addressed to this node.
func (a *Agent) onNodeCmd(m *nats.Msg) {
	var req Cmd
	if err := Decode(m, &req); err != nil {
		a.counters.Malformed.Add(1)
		a.log.Warn().Err(err).Msg("bad node request: dropped")
		a.reply(m, CmdReply{Error: err.Error()})
		return
	}
	var err error
	switch req.Kind {
	case CmdPrepare:
		err = a.prepare(req)
	case CmdSubmit:
		var coordinator string
		coordinator, err = a.Submit(req.Job, req.Args)
		if err == nil {
			a.reply(m, SubmitReply{Coordinator: coordinator})
			return
		}
		a.reply(m, SubmitReply{Error: err.Error()})
		return
	default:
		err = fmt.Errorf("unknown node request %q", req.Kind)
	}
	r := CmdReply{}
	if err != nil {
		r.Error = err.Error()
	}
	a.reply(m, r)
}

// reply answers a request, if it has a reply subject.
func (a *Agent) reply(m *nats.Msg, v any) {
	if m.Reply == "" {
		return
	}
	if err := m.Respond(Encode(v)); err != nil {
		a.log.Warn().Err(err).Str("subject", m.Subject).Msg("reply")
	}
}

// jobStore is the checkpoint store of a job on this node: the cluster's
// JetStream object store, with a copy of what this node writes in its
// workdir, which restores read first unless local recovery is off.
func (a *Agent) jobStore() (store.Store, error) {
	m, err := a.mirror()
	if err != nil {
		return nil, err
	}
	if a.cfg.NoLocalRecovery {
		return remoteReads{m}, nil
	}
	return m, nil
}

// buildJob builds a job from its arguments and plans it, as every node of
// the cluster does from the same arguments.
func (a *Agent) buildJob(name string, args []string) (*JobSpec, *plan.Job, error) {
	spec, err := a.cfg.Jobs(name, args)
	if err != nil {
		return nil, nil, err
	}
	if spec == nil || spec.Graph == nil {
		return nil, nil, fmt.Errorf("job %s: the job builder returned no graph", name)
	}
	p, err := graphplan.Of(spec.Graph)
	if err != nil {
		return nil, nil, fmt.Errorf("job %s: %w", name, err)
	}
	return spec, p, nil
}

// runtimeFor is the runtime configuration of a job's part on this node.
func (a *Agent) runtimeFor(spec *JobSpec, p *plan.Job, restore string, coordinator bool) (actors.Options, error) {
	st, err := a.jobStore()
	if err != nil {
		return actors.Options{}, err
	}
	cfg := spec.Run
	if cfg.Runtime.BatchSize == 0 {
		// Buffers that cross NATS pay per message: batch more than in
		// one process (measured: 4M keycount records took 8.6 s with 512,
		// 3.2 s with 8192 over 3 nodes on 2 cores).
		cfg.Runtime.BatchSize = clusterBatchSize
	}
	cfg.Restore = restore
	// The coordinator, holding the job's lease, is the one writer of its
	// checkpoints: it deletes those that never completed.
	cfg.OwnsStore = coordinator
	if coordinator && restore != "" {
		cfg.HeldByNodes = a.heldByNodes(p.Name)
	}
	cfg.Duration = 0 // the coordinator ends the sources
	// Checkpoints skipped as corrupt or deleted by a restore are logged.
	cfg.Logger = a.log.With().Str("job", p.Name).Logger()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return weir.RuntimeFor(ctx, spec.Graph, cfg, st)
}

// applyRestorePlan gives a prepared part the parallelisms and key-group
// tables of the coordinator's restore of checkpoint id.
func (a *Agent) applyRestorePlan(spec *JobSpec, p *plan.Job, id uint64) error {
	st, err := a.jobStore()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	return weir.ApplyRestorePlan(ctx, spec.Graph, spec.Run, st, id)
}

// prepare starts the part of a job that runs on this node, replacing an
// older part of the same job (from a coordinator that was replaced).
func (a *Agent) prepare(req Cmd) error {
	if ok, highest := a.fence.Admit(req.Job, req.Epoch); !ok {
		err := cluster.FencedError(req.Job, req.Epoch, highest)
		a.log.Warn().Str("job", req.Job).Str("coordinator", req.Coordinator).Uint64("epoch", req.Epoch).
			Uint64("highest_epoch", highest).Msg("prepare from a replaced coordinator refused (fenced)")
		return fmt.Errorf("node %s: %w", a.cfg.ID, err)
	}
	spec, p, err := a.buildJob(req.Job, req.Args)
	if err != nil {
		return fmt.Errorf("node %s: %w", a.cfg.ID, err)
	}
	rt, err := a.runtimeFor(spec, p, "", false)
	if err == nil && req.Restore != 0 {
		err = a.applyRestorePlan(spec, p, req.Restore)
	}
	if err != nil {
		return fmt.Errorf("node %s: job %s: %w", a.cfg.ID, req.Job, err)
	}
	// Compared once the part has the coordinator's parallelisms: an edge
	// whose partitioner the graph chose from them counts in the fingerprint.
	if fp := p.Fingerprint(); fp != req.Fingerprint {
		return fmt.Errorf("node %s builds a different graph for job %s (fingerprint %s, coordinator has %s): is it the same node binary?",
			a.cfg.ID, req.Job, fp, req.Fingerprint)
	}
	if err := a.endPart(req.Job); err != nil {
		return err
	}
	// The part's messages carry the coordinator's epoch: once a newer
	// coordinator prepares the other nodes, they refuse this part's. It
	// acts only on the job-level messages of the coordinator's run.
	rt.Cluster = &actors.ClusterOptions{Epoch: req.Epoch, Run: req.Run}
	j, err := a.node.StartFragment(p, rt)
	if err != nil {
		return fmt.Errorf("node %s: %w", a.cfg.ID, err)
	}
	a.mu.Lock()
	a.parts[req.Job] = j
	a.mu.Unlock()
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		select {
		case <-j.Done():
		case <-a.quit:
			return
		}
		a.mu.Lock()
		if a.parts[req.Job] == j {
			delete(a.parts, req.Job)
		}
		a.mu.Unlock()
		a.reconcileJobLocal(req.Job)
	}()
	a.log.Info().Str("job", req.Job).Str("coordinator", req.Coordinator).Uint64("epoch", req.Epoch).Int("run", req.Run).
		Msg("prepared the job's part on this node")
	return nil
}

// endPart stops this node's part of a job, if any, and waits for it.
func (a *Agent) endPart(job string) error {
	a.mu.Lock()
	old := a.parts[job]
	a.mu.Unlock()
	if old == nil {
		return nil
	}
	old.StopPart("replaced by a new coordinator")
	select {
	case <-old.Done():
	case <-time.After(partStopTimeout):
		return fmt.Errorf("node %s: the old part of job %s did not stop within %v", a.cfg.ID, job, partStopTimeout)
	}
	a.mu.Lock()
	if a.parts[job] == old {
		delete(a.parts, job)
	}
	a.mu.Unlock()
	return nil
}
