package node

import (
	"errors"
	"fmt"
	"slices"

	"github.com/weirstream/weir/cluster"
	"github.com/weirstream/weir/cluster/placement"
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

// reprepare prepares job cj's part on node, back as incarnation hb, at the
// checkpoint the job restores from now (see placement.RestorePoint). When
// that checkpoint was subsumed meanwhile (the prepare failed and a newer
// one completed), it tries once more at the newer one.
func (a *Agent) reprepare(cj *coordJob, node string, hb cluster.Heartbeat) error {
	if hb.Node == "" {
		return fmt.Errorf("node %s is not alive", node)
	}
	if node == a.cfg.ID {
		return nil
	}
	err := prepareAtRestorePoint(cj.restorePoint, func(point uint64) error {
		var r CmdReply
		err := Request(a.nc, CmdSubject(node), Cmd{Kind: CmdPrepare, Job: cj.name, Args: cj.args, Fingerprint: cj.plan.Fingerprint(),
			Coordinator: a.cfg.ID, Epoch: cj.epoch, Run: cj.run, Restore: point}, &r, prepareTimeout)
		if err == nil && r.Error != "" {
			err = errors.New(r.Error)
		}
		if err != nil {
			return fmt.Errorf("prepare job %s on node %s at checkpoint %d: %w", cj.name, node, point, err)
		}
		return nil
	}, func(err error, newer uint64) {
		a.log.Warn().Err(err).Str("job", cj.name).Str("peer", node).Uint64("checkpoint", newer).Msg("returned node: preparing again at a newer checkpoint")
	})
	if err != nil {
		return err
	}
	a.mu.Lock()
	cj.incarn[node] = hb.StartedUnixNano
	a.mu.Unlock()
	return nil
}

// prepareAtRestorePoint runs prepare at the restore point (point gives it
// now). When prepare fails and the restore point moved meanwhile (the
// checkpoint prepared at was subsumed and deleted during the prepare itself,
// a newer one having completed), it calls retrying and prepares once more
// at the newer point; it gives up after two attempts, so that a node that
// keeps failing while checkpoints keep completing is not retried without
// end. It returns the last attempt's error.
func prepareAtRestorePoint(point func() uint64, prepare func(point uint64) error, retrying func(err error, newer uint64)) error {
	at := point()
	for try := 1; ; try++ {
		err := prepare(at)
		if err == nil {
			return nil
		}
		newer := point()
		if newer == at || try == 2 {
			return err
		}
		retrying(err, newer)
		at = newer
	}
}

// restorePoint is the checkpoint job cj restores its tasks from now.
func (cj *coordJob) restorePoint() uint64 {
	var completed []uint64
	if j := cj.running.Load(); j != nil {
		for _, c := range j.Checkpoints() {
			completed = append(completed, c.ID)
		}
	}
	return placement.RestorePoint(cj.restored, completed)
}
