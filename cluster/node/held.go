package node

import (
	"context"
	"fmt"
	"slices"

	"github.com/weirstream/weir/cluster"
	"github.com/weirstream/weir/store"
)

// heldStates turns the local copy's inventory into what heartbeats carry:
// per job, operator and checkpoint, key-group ranges and bytes.
func heldStates(hs []store.LocalHolding) []cluster.HeldState {
	out := make([]cluster.HeldState, 0, len(hs))
	for _, h := range hs {
		kg := make([][2]int, 0, len(h.KeyGroups))
		for _, r := range h.KeyGroups {
			kg = append(kg, [2]int{r.Start, r.End})
		}
		out = append(out, cluster.HeldState{Job: h.Job, Operator: h.Operator, Checkpoint: h.Checkpoint, KeyGroups: kg,
			KeyGroupBytes: h.KeyGroupBytes, Bytes: h.Bytes, ChainBytes: h.ChainBytes})
	}
	return out
}

// reconcileLocal makes the node's local copy follow the checkpoint store
// before the node runs tasks: the local state of jobs the registry says
// ended, and of checkpoints the store no longer holds, is deleted. Then it
// takes the inventory the heartbeats report and faults memory in for
// restoring what it holds (prewarm).
func (a *Agent) reconcileLocal(ctx context.Context) error {
	recs, err := a.jobs.List(ctx)
	if err != nil {
		return fmt.Errorf("reconcile local state: list jobs: %w", err)
	}
	var ended []string
	for _, rec := range recs {
		if rec.State != cluster.JobRunning {
			ended = append(ended, rec.Name)
		}
	}
	m, err := a.mirror()
	if err != nil {
		return err
	}
	deleted, err := m.Reconcile(ctx, ended...)
	for _, d := range deleted {
		a.log.Info().Str("job", d.Job).Uint64("checkpoint", d.Checkpoint).Msg("local state deleted: job ended or checkpoint subsumed")
	}
	if err != nil {
		// What could not be checked is kept; the rest was reconciled.
		a.log.Warn().Err(err).Msg("reconcile local state")
	}
	a.refreshHeld(ctx)
	a.prewarm("start")
	return nil
}

// reconcileJobLocal drops this node's copies of job's checkpoints that the
// store no longer holds, once its part there stopped: the deletions of
// retention's last round may have reached the part as it was stopping.
func (a *Agent) reconcileJobLocal(job string) {
	m, err := a.mirror()
	if err != nil {
		a.log.Warn().Err(err).Str("job", job).Msg("reconcile local state")
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), partStopTimeout)
	defer cancel()
	deleted, err := m.ReconcileJob(ctx, job)
	for _, d := range deleted {
		a.log.Info().Str("job", d.Job).Uint64("checkpoint", d.Checkpoint).Msg("local state deleted: checkpoint subsumed")
	}
	if err != nil {
		a.log.Warn().Err(err).Str("job", job).Msg("reconcile local state")
	}
	a.refreshHeld(ctx)
}

// refreshHeld takes the inventory of the local copy for the heartbeats and
// logs when it changed (a checkpoint completed or was pruned). Damaged
// indexes are logged and left out by the store.
func (a *Agent) refreshHeld(ctx context.Context) {
	m, err := a.mirror()
	if err != nil {
		a.log.Warn().Err(err).Msg("local state inventory")
		return
	}
	hs, err := m.Inventory(ctx)
	if err != nil {
		a.log.Warn().Err(err).Msg("local state inventory")
		return
	}
	held := heldStates(hs)
	a.mu.Lock()
	changed := !slices.EqualFunc(held, a.held, sameHeld)
	a.held = held
	a.mu.Unlock()
	if changed {
		var bytes int64
		for _, h := range held {
			bytes += h.Bytes
		}
		a.log.Debug().Int("holdings", len(held)).Int64("bytes", bytes).Msg("local state inventory changed")
	}
}

// sameHeld reports whether two holdings are the same.
func sameHeld(x, y cluster.HeldState) bool {
	return x.Job == y.Job && x.Operator == y.Operator && x.Checkpoint == y.Checkpoint && x.Bytes == y.Bytes &&
		x.KeyGroupBytes == y.KeyGroupBytes && x.ChainBytes == y.ChainBytes && slices.Equal(x.KeyGroups, y.KeyGroups)
}

// mirror is the node's checkpoint store: the cluster's, with its local copy.
func (a *Agent) mirror() (*store.Mirror, error) {
	js, err := store.NewJetStream(a.storeJS)
	if err != nil {
		return nil, fmt.Errorf("checkpoint store: %w", err)
	}
	return &store.Mirror{Primary: js, Local: a.local, Log: a.log}, nil
}
