package actors

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/weirstream/weir/internal/plan"
	taskid "github.com/weirstream/weir/internal/task"
	"github.com/weirstream/weir/metrics"
	"github.com/weirstream/weir/store"
	"github.com/weirstream/weir/transport"
)

// jobCluster is the coordinator's cluster side: where each task runs.
type jobCluster struct {
	r      *Remote
	placed map[taskid.ID]string // task → node
	unsubs []func()
	gen    int // link incarnation of the coordinator's own messages to nodes
	run    int // this run of the job: its parts act only on its messages (ClusterOptions.Run)
}

// nodeLostMsg tells the coordinator that a node stopped heartbeating.
type nodeLostMsg struct {
	priority
	node string
	back bool // the node is back already (NodeBack): it is not marked dead
}

// NodeLost tells the job that node is gone: its tasks fail and restart
// elsewhere from the latest checkpoint.
func (j *Job) NodeLost(node string) { j.send(&nodeLostMsg{node: node}) }

// LocalTasks is how many task instances of the job run on this node.
func (j *Job) LocalTasks() int { return int(j.tasks.Load()) }

// fenced reports whether the coordinator stopped acting because its lease
// lapsed (ClusterOptions.Holds): it then abandons the job instead of acting
// on the message, so a coordinator that was paused or cut off past its lease
// never triggers, completes or commits a checkpoint nor restarts a task
// after another node may have taken the job over.
func (a *jobActor) fenced(ctx actor.Context) bool {
	if a.cl == nil || a.ended || a.job.opts.Cluster.Holds == nil {
		return false
	}
	switch ctx.Message().(type) {
	case *actor.Started, *actor.Stopping, *actor.Stopped, *actor.Restarting:
		return false
	}
	if a.job.opts.Cluster.Holds() {
		return false
	}
	a.abandon(ctx, "coordinator lease lapsed: another node may coordinate the job")
	return true
}

// Placement lists the node each task instance runs on ("op[i]" → node).
func (j *Job) Placement() map[string]string {
	j.mu.Lock()
	defer j.mu.Unlock()
	out := make(map[string]string, len(j.placement))
	for k, v := range j.placement {
		out[k] = v
	}
	return out
}

// startCluster makes the coordinator reachable from other nodes.
func (a *jobActor) startCluster(ctx actor.Context) error {
	if a.job.opts.Cluster == nil {
		return nil
	}
	r := a.job.node.remote
	a.cl = &jobCluster{r: r, placed: map[taskid.ID]string{}, gen: stamp(), run: a.job.opts.Cluster.Run}
	if a.cl.run == 0 {
		a.cl.run = stamp()
	}
	r.addJob(a.job)
	r.register(ctx.Self(), WireRef{Kind: refCoordinator})
	name := a.job.Plan.Name
	for _, subj := range []string{transport.CoordinatorSubject(name), transport.ControlSubject(name, r.node)} {
		unsub, err := r.listen(name, subj, ctx.Self())
		if err != nil {
			return err
		}
		a.cl.unsubs = append(a.cl.unsubs, unsub)
	}
	return nil
}

// stopCluster tells every node with a part of the job that it is over.
func (a *jobActor) stopCluster(ctx actor.Context, reason string) {
	if a.cl == nil {
		return
	}
	for _, u := range a.cl.unsubs {
		u()
	}
	a.cl.unsubs = nil
	name := a.job.Plan.Name
	for _, node := range a.job.opts.Cluster.Nodes() {
		if node == a.cl.r.node {
			continue
		}
		ref := WireRef{Node: node, ID: "node/job-" + name, Kind: refJob}
		if err := a.cl.r.send(a.job, a.linkTo(node), a.cl.gen, ref, &endFragmentMsg{reason: reason, run: a.cl.run}, nil); err != nil {
			a.job.log.Warn().Err(err).Str("peer", node).Msg("tell node the job is over")
		}
	}
	a.cl.r.unregister(ctx.Self())
	a.cl.r.stopProxies(a.job)
	a.cl.r.removeJob(a.job)
}

// spawnRemote starts task instance i of op on node through a stand-in child
// of the coordinator named name.
func (a *jobActor) spawnRemote(ctx actor.Context, op *plan.Operator, i, gen int, node string, m *store.Manifest, name string) (*actor.PID, error) {
	target := WireRef{Node: node, ID: ctx.Self().Id + fmt.Sprintf("/%s-%d", op.Name, i), Kind: refTask, Op: op.ID, Instance: i}
	spawn := &spawnTaskMsg{op: op.ID, instance: i, gen: gen, token: stamp(), run: a.cl.run, manifest: m, rescale: a.rescaleOf(op)}
	p := newProxy(a.cl.r, a.job, target, spawn)
	pid, err := ctx.SpawnNamed(proxyProps(p), name)
	if err != nil {
		return nil, fmt.Errorf("deploy task %s on node %s: %w", taskName(op, i), node, err)
	}
	return pid, nil
}

// place picks the node of a task (this node outside a cluster).
func (a *jobActor) place(op *plan.Operator, i int) (string, error) {
	if a.cl == nil {
		return "", nil
	}
	node, planned := a.rescalePlaced(op, i)
	if !planned {
		var err error
		if node, err = a.job.opts.Cluster.Place(op, i); err != nil {
			return "", fmt.Errorf("place task %s: %w", taskName(op, i), err)
		}
	}
	a.cl.placed[taskID(op, i)] = node
	a.job.mu.Lock()
	if a.job.placement == nil {
		a.job.placement = map[string]string{}
	}
	a.job.placement[taskName(op, i)] = node
	a.job.mu.Unlock()
	return node, nil
}

// isRemote reports whether task (op, i) runs on another node.
func (a *jobActor) isRemote(op, i int) bool {
	return a.cl != nil && a.cl.placed[a.idOf(op, i)] != a.cl.r.node
}

// stopTask stops a task for a restart: a local one directly, a remote one
// through its stand-in, which ends once the task's node reports it gone;
// the stand-in of a task whose node was lost (lost, as the supervision state
// machine knows it, or marked lost now) stops at once.
func (a *jobActor) stopTask(ctx actor.Context, t taskid.ID, pid *actor.PID, lost bool) {
	if !lost && a.isRemote(t.OperatorID, t.Instance) && !a.cl.r.isLost(a.cl.placed[t]) {
		ctx.Send(pid, &stopRemoteMsg{})
		return
	}
	ctx.Stop(pid)
}

// onNodeLost fails every task that ran on a lost node; the stand-in of one
// already stopping for a restart stops at once (the node will not confirm):
// the supervision state machine decides which. back: the node returned as a
// new incarnation (it is not marked dead).
func (a *jobActor) onNodeLost(ctx actor.Context, node string, back bool) {
	if a.cl == nil || a.ended {
		return
	}
	if !back {
		a.cl.r.NodeLost(node)
	}
	err := fmt.Errorf("node %s lost (%w)", node, errNoHeartbeat)
	for key, n := range a.cl.placed {
		if n != node {
			continue
		}
		pid := a.tasks[key.OperatorID][key.Instance]
		if a.sv != nil {
			if r, ok := a.sv.sup.RegionOfTask(key); ok {
				a.sv.noteCause(r, metrics.CauseNodeLost)
			}
			a.carryOutSupervision(ctx, a.sv.sup.OnNodeLost(key))
			if a.sv.sup.Stopping(key) {
				continue
			}
		}
		if pid != nil && !a.finishedTasks[key] {
			a.job.log.Warn().Str("lost_node", node).Str("task", key.String()).Msg("task lost with its node")
			a.onFailure(ctx, pid, err)
		}
	}
}

// onLinkFailed turns a message lost on the way to the coordinator into a
// failure of the tasks on the sending node.
func (a *jobActor) onLinkFailed(ctx actor.Context, m *linkFailedMsg) {
	if a.cl == nil {
		return
	}
	node, _, _ := strings.Cut(m.from, "/")
	failed := false
	for key, n := range a.cl.placed {
		// No sender (the coordinator's own subscription lost messages): all.
		if pid := a.tasks[key.OperatorID][key.Instance]; (n == node || m.from == "") && pid != nil {
			a.onFailure(ctx, pid, &linkError{reason: m.reason})
			failed = true
		}
	}
	if !failed {
		a.job.log.Warn().Str("from", m.from).Str("reason", m.reason).Msg("lost message from a node without tasks")
	}
}

// abandonMsg makes a coordinator stop acting without ending the job: another
// node took over its coordination.
type abandonMsg struct {
	priority
	reason string
}

// ErrAbandoned is the error of a job whose coordinator stopped acting because
// another node took the job over.
var ErrAbandoned = errors.New("coordination handed over to another node")

// Abandon stops this coordinator without ending the job on the other nodes
// (it lost its lease, or its node is leaving); Err then wraps ErrAbandoned.
func (j *Job) Abandon(reason string) { j.send(&abandonMsg{reason: reason}) }

// abandon stops the coordinator quietly: its stand-ins do not stop their
// tasks, the nodes are not told the job ended.
func (a *jobActor) abandon(ctx actor.Context, reason string) {
	if a.ended {
		return
	}
	a.ended = true
	a.job.log.Warn().Str("reason", reason).Msg("coordinator abandons the job")
	a.stopFlushTicker()
	a.stopChaos()
	a.stopIO()
	if a.cl != nil {
		for _, u := range a.cl.unsubs {
			u()
		}
		a.cl.unsubs = nil
		// With the job forgotten here, the stand-ins stop without stopping
		// their tasks.
		a.cl.r.unregister(ctx.Self())
		a.cl.r.stopProxies(a.job)
		a.cl.r.removeJob(a.job)
	}
	a.job.finish(fmt.Errorf("job %q: %s: %w", a.job.Plan.Name, reason, ErrAbandoned))
	ctx.Stop(ctx.Self())
}

// pruneMsg tells a node's part of a job that checkpoints ids are deleted:
// it drops its local copies of them. run names the run of the job that
// deleted them.
type pruneMsg struct {
	priority
	ids []uint64
	run int
}

// pruneParts tells the nodes with a part of the job which checkpoints were
// deleted, so their local copies go too.
func (a *jobActor) pruneParts(ids []uint64) {
	if a.cl == nil || a.ctx == nil {
		return
	}
	a.toParts(&pruneMsg{ids: ids, run: a.cl.run}, "tell node to drop old checkpoints")
}

// toParts sends m to the job's part on every other live node; what failed
// is logged as what.
func (a *jobActor) toParts(m any, what string) {
	name := a.job.Plan.Name
	for _, node := range a.job.opts.Cluster.Nodes() {
		if node == a.cl.r.node || a.cl.r.isLost(node) {
			continue
		}
		ref := WireRef{Node: node, ID: "node/job-" + name, Kind: refJob}
		if err := a.cl.r.send(a.job, a.linkTo(node), a.cl.gen, ref, m, nil); err != nil {
			a.job.log.Warn().Err(err).Str("peer", node).Msg(what)
		}
	}
}

// LocalPruner is a checkpoint store that keeps node-local copies which a
// node drops when the coordinator deletes a checkpoint (store.Mirror).
type LocalPruner interface {
	PruneLocal(ctx context.Context, job string, ids []uint64) error
}

// linkTo names the coordinator's own link to a node's part of the job (one
// numbered sequence per destination: every part has the same actor id).
func (a *jobActor) linkTo(node string) string {
	return a.cl.r.node + "/" + a.ctx.Self().Id + ">" + node
}
