package node

import (
	"context"
	"slices"
	"time"

	"github.com/weirstream/weir/cluster/placement"
)

// heldByNodes reports whether a live node (this one included) holds key
// group g of operator op of job at checkpoint ckpt, as the nodes' latest
// heartbeats say; nil when this node's restores do not read local copies
// (--local-recovery=false): then every section is verified in the store.
func (a *Agent) heldByNodes(job string) func(ckpt uint64, op string, g int) bool {
	if a.cfg.NoLocalRecovery {
		return nil
	}
	nodes := a.placementNodes()
	return func(ckpt uint64, op string, g int) bool { return placement.HeldAt(job, op, ckpt, g, nodes) }
}

// awaitHolders waits, before the checkpoint a takeover restores is chosen
// and verified, until this node has learned the cluster's membership (its
// settle period) or the live nodes heard so far hold every key group of
// the job's newest checkpoint: the verification leaves out what they hold
// (heldByNodes), which a node that has not been heard yet would otherwise
// make this node read from the store. It is cut short by a node joining,
// and returns at once on a node that has run for its settle period.
func (a *Agent) awaitHolders(job string) error {
	for {
		joined := a.joinedSignal()
		a.mu.Lock()
		left := a.core.SettleLeft(time.Now())
		a.mu.Unlock()
		if left <= 0 || a.cfg.NoLocalRecovery || a.newestHeld(job) {
			return nil
		}
		if err := a.sleepOrJoin(left, joined); err != nil {
			return err
		}
	}
}

// newestHeld reports whether the live nodes hold every key group of job's
// newest checkpoint (false when it cannot be read).
func (a *Agent) newestHeld(job string) bool {
	st, err := a.jobStore()
	if err != nil {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), a.cfg.HeartbeatTimeout)
	defer cancel()
	ids, _ := st.List(ctx, job) // corrupt manifests are left out: the newest readable one counts
	if len(ids) == 0 {
		return false
	}
	newest := slices.Max(ids)
	m, err := st.Manifest(ctx, job, newest)
	if err != nil {
		return false
	}
	return len(placement.MissingHeld(job, newest, storedState(m), a.placementNodes())) == 0
}
