package node

import (
	"time"

	"github.com/weirstream/weir/cluster"
)

// restartWarmKeep is how long the memory a node faults in for restoring
// the local state it holds (store.Local.Prewarm) waits for the restores
// that read that state: they come seconds later (after a start, the settle
// period, then placement and the job's preparation; after a peer was lost
// or returned, the placement of the job again); what they did not take is
// given back after it.
const restartWarmKeep = time.Minute

// warmBytes is what this node would read into memory that restored state
// keeps if every task of the jobs whose state it holds (of those in jobs;
// nil: all) were placed back on it: per job, the most it holds at any one
// checkpoint, over all its operators, but for key groups stored
// incrementally (their chains are read through one reused buffer). The
// most, not the newest: a node killed while writing a checkpoint holds part
// of it, and the job restores the one before.
func warmBytes(held []cluster.HeldState, jobs map[string]bool) int64 {
	type at struct {
		job  string
		ckpt uint64
	}
	sums := map[at]int64{}
	for _, h := range held {
		if b := h.Bytes - h.ChainBytes; b > 0 && (jobs == nil || jobs[h.Job]) {
			sums[at{h.Job, h.Checkpoint}] += b
		}
	}
	most := map[string]int64{}
	for k, b := range sums {
		most[k.job] = max(most[k.job], b)
	}
	var n int64
	for _, b := range most {
		n += b
	}
	return n
}

// prewarm faults memory in for the restores of the local state this node
// holds, of every job when it starts (why "start"), of the jobs running
// here when a peer was declared dead or returned (why "peer lost" or "peer
// returned": their region restarts from the checkpoint). Not when local
// recovery is off: those restores read the checkpoint store.
func (a *Agent) prewarm(why string) {
	if a.cfg.NoLocalRecovery {
		return
	}
	a.mu.Lock()
	var jobs map[string]bool
	if why != "start" {
		jobs = map[string]bool{}
		for name := range a.parts {
			jobs[name] = true
		}
		for name := range a.coord {
			jobs[name] = true
		}
	}
	n := warmBytes(a.held, jobs)
	a.mu.Unlock()
	if a.local.Prewarm(n, restartWarmKeep, a.log) {
		a.log.Info().Int64("bytes", n).Str("reason", why).Dur("kept_for", restartWarmKeep).
			Msg("faulting memory in for restoring the local state this node holds")
	}
}
