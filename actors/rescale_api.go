package actors

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/weirstream/weir/rescale"
)

// Rescale changes the parallelism of the named operators while the job
// runs, as rescale's protocol describes: only the key groups that change
// owner move, and the others never pause. It returns once the rescale has
// committed, with what it measured; or an error if it cannot run (a plan
// error, another rescale running, the job ending or restarting a region, a
// cluster job; with checkpoints, a sink to rescale or tasks in more than one
// failover region, or the final checkpoint completed or completing while the
// rescale waits for it: rescale.ErrInputEnded), or if the job ends first. With checkpoints a rescale
// waits for a running checkpoint and checkpoints wait for it; a failure
// during it aborts it, and the job restarts from its latest checkpoint. A request made before the job's tasks are
// wired starts once they are. ctx only bounds the wait: the rescale goes on
// if ctx ends.
func (j *Job) Rescale(ctx context.Context, parallelism map[string]int) (rescale.Result, error) {
	var targets []rescale.Target
	for op, p := range parallelism {
		targets = append(targets, rescale.Target{Operator: op, Parallelism: p})
	}
	sort.Slice(targets, func(a, b int) bool { return targets[a].Operator < targets[b].Operator })
	reply := make(chan rescaleReply, 1)
	j.mu.Lock()
	pid := j.pid
	j.mu.Unlock()
	if pid == nil {
		return rescale.Result{}, errors.New("rescale: the job has not started")
	}
	j.node.system.Root.Send(pid, &rescaleRequestMsg{targets: targets, reply: reply})
	select {
	case r := <-reply:
		return r.result, r.err
	case <-j.done:
		if err := j.Err(); err != nil {
			return rescale.Result{}, fmt.Errorf("rescale: the job ended: %w", err)
		}
		return rescale.Result{}, errors.New("rescale: the job ended")
	case <-ctx.Done():
		return rescale.Result{}, fmt.Errorf("rescale: %w", ctx.Err())
	}
}
