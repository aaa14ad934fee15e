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
// error, another rescale running, the job ending or restarting a region;
// with checkpoints, fewer instances of a sink that stages its output per
// checkpoint and cannot hand it off, or the final checkpoint completed or completing while the
// rescale waits for it: rescale.ErrInputEnded), or if the job ends first. With
// checkpoints a rescale waits for a running checkpoint and checkpoints wait
// for it; a failure during it aborts it, and the job restarts from its
// latest checkpoint. A request made before the job's tasks are wired starts
// once they are. On a cluster the job's coordinator runs it
// (rescale_cluster*.go). ctx only bounds the wait: the rescale goes on if
// ctx ends.
func (j *Job) Rescale(ctx context.Context, parallelism map[string]int) (rescale.Result, error) {
	run, err := j.StartRescale(ctx, parallelism)
	if err != nil {
		return rescale.Result{}, err
	}
	return run.Wait(ctx)
}

// RescaleRun is a live rescale that has started (Job.StartRescale).
type RescaleRun struct {
	// Plan is what the rescale changes and moves.
	Plan  *rescale.Plan
	job   *Job
	reply chan rescaleReply
}

// StartRescale is Rescale in two steps: it returns once the rescale has
// been planned and started (or with the reason it cannot start); Wait then
// returns its outcome. ctx only bounds the wait.
func (j *Job) StartRescale(ctx context.Context, parallelism map[string]int) (*RescaleRun, error) {
	var targets []rescale.Target
	for op, p := range parallelism {
		targets = append(targets, rescale.Target{Operator: op, Parallelism: p})
	}
	sort.Slice(targets, func(a, b int) bool { return targets[a].Operator < targets[b].Operator })
	reply, planned := make(chan rescaleReply, 1), make(chan *rescale.Plan, 1)
	j.mu.Lock()
	pid := j.pid
	j.mu.Unlock()
	if pid == nil {
		return nil, errors.New("rescale: the job has not started")
	}
	j.node.system.Root.Send(pid, &rescaleRequestMsg{targets: targets, reply: reply, planned: planned})
	select {
	case p := <-planned:
		return &RescaleRun{Plan: p, job: j, reply: reply}, nil
	case r := <-reply:
		if r.err == nil {
			r.err = errors.New("rescale: ended before it was planned")
		}
		return nil, r.err
	case <-j.done:
		return nil, j.endedErr()
	case <-ctx.Done():
		return nil, fmt.Errorf("rescale: %w", ctx.Err())
	}
}

// Wait returns the rescale's outcome once it has committed or failed, or
// ctx's error (the rescale goes on).
func (r *RescaleRun) Wait(ctx context.Context) (rescale.Result, error) {
	select {
	case res := <-r.reply:
		return res.result, res.err
	case <-r.job.done:
		select {
		case res := <-r.reply:
			return res.result, res.err
		default:
		}
		return rescale.Result{}, r.job.endedErr()
	case <-ctx.Done():
		return rescale.Result{}, fmt.Errorf("rescale: %w", ctx.Err())
	}
}

// ErrJobEnded is a rescale's error when the job ended before the rescale
// ran (wrapping the job's error if it failed).
var ErrJobEnded = errors.New("rescale: the job ended")

// endedErr is a rescale's error when the job ended first.
func (j *Job) endedErr() error {
	if err := j.Err(); err != nil {
		return fmt.Errorf("%w: %w", ErrJobEnded, err)
	}
	return ErrJobEnded
}
