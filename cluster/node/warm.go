package node

import (
	"time"

	"github.com/weirstream/weir/cluster"
)

// restartWarmKeep is how long the memory a node faults in at start-up for
// the local state it holds (store.Local.Prewarm) waits for the restores
// that read that state: they come once the node has joined and its tasks
// are placed back on it, seconds after it starts (the settle period, then
// placement and the job's preparation); what they did not take is given
// back after it.
const restartWarmKeep = time.Minute

// warmBytes is what this node would restore if every task whose state it
// holds were placed back on it: per job, the bytes held at the newest
// checkpoint it holds, over all its operators.
func warmBytes(held []cluster.HeldState) int64 {
	newest := map[string]uint64{}
	for _, h := range held {
		newest[h.Job] = max(newest[h.Job], h.Checkpoint)
	}
	var n int64
	for _, h := range held {
		if h.Checkpoint == newest[h.Job] && h.Bytes > 0 {
			n += h.Bytes
		}
	}
	return n
}

// prewarm faults memory in for the restores of the local state this node
// holds, while it joins the cluster (not when local recovery is off: its
// restores read the checkpoint store).
func (a *Agent) prewarm() {
	if a.cfg.NoLocalRecovery {
		return
	}
	a.mu.Lock()
	n := warmBytes(a.held)
	a.mu.Unlock()
	if a.local.Prewarm(n, restartWarmKeep, a.log) {
		a.log.Info().Int64("bytes", n).Dur("kept_for", restartWarmKeep).
			Msg("faulting memory in for restoring the local state this node holds")
	}
}
