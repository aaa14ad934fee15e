package node

import (
	"errors"
	"fmt"
	"slices"

	"github.com/weirstream/weir/cluster"
)

// nodeBack puts the lost tasks of node, returned, back on it: for each job
// coordinated here with a part on node, the node's new incarnation is
// prepared again (at the job's lease epoch: a part of an older coordinator
// is refused there), then becomes the part's incarnation, and the job
// restarts the tasks it ran, which placement puts back on it. When the
// prepare fails the tasks are lost as on a node that did not return.
func (a *Agent) nodeBack(node string) {
	var hb cluster.Heartbeat
	for _, n := range a.alive() {
		if n.Node == node {
			hb = n
		}
	}
	for _, cj := range a.coordJobs() {
		if !slices.Contains(cj.nodes, node) {
			continue
		}
		if err := a.reprepare(cj, node, hb); err != nil {
			a.log.Warn().Err(err).Str("job", cj.name).Str("peer", node).Msg("returned node not prepared: placing its tasks elsewhere")
			a.remote.NodeLost(node)
			cj.job.NodeLost(node)
			continue
		}
		cj.job.NodeBack(node)
	}
}

// reprepare prepares job cj's part on node, back as incarnation hb.
func (a *Agent) reprepare(cj *coordJob, node string, hb cluster.Heartbeat) error {
	if hb.Node == "" {
		return fmt.Errorf("node %s is not alive", node)
	}
	if node == a.cfg.ID {
		return nil
	}
	var r CmdReply
	err := Request(a.nc, CmdSubject(node), Cmd{Kind: CmdPrepare, Job: cj.name, Args: cj.args, Fingerprint: cj.plan.Fingerprint(),
		Coordinator: a.cfg.ID, Epoch: cj.epoch, Run: cj.run, Restore: cj.restored}, &r, prepareTimeout)
	if err == nil && r.Error != "" {
		err = errors.New(r.Error)
	}
	if err != nil {
		return fmt.Errorf("prepare job %s on node %s: %w", cj.name, node, err)
	}
	a.mu.Lock()
	cj.incarn[node] = hb.StartedUnixNano
	a.mu.Unlock()
	return nil
}
