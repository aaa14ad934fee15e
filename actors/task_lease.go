package actors

import "errors"

// errLeaseLapsed fails a sink on the coordinator's node whose coordinator no
// longer holds its lease.
var errLeaseLapsed = errors.New("coordinator lease lapsed: this node's part of the job no longer writes output")

// checkLease fails a sink task on the coordinator's node once the
// coordinator's lease has lapsed (ClusterOptions.Holds), before the sink
// writes, seals or commits anything. A node paused past its lease resumes
// with its tasks still running: another node's coordinator now owns the
// job's output, and a sink of the old one that went on writing (to a
// shared staging file, say) would repeat or corrupt it. The failure reaches
// the coordinator, which abandons the job. Other nodes' tasks are fenced by
// epoch instead (Remote.Fence).
func (t *task) checkLease() {
	c := t.job.opts.Cluster
	if t.sink == nil || c == nil || c.Holds == nil {
		return
	}
	if !c.Holds() {
		t.fail(errLeaseLapsed)
	}
}
