package node

import (
	"context"
	"errors"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/weirstream/weir/cluster"
)

// onCancel stops a job this node coordinates. The cancel is recorded in the
// job's registry record first, so that it survives this coordinator: a node
// that takes the job over while it stops ends it as cancelled (adopt).
func (a *Agent) onCancel(m *nats.Msg) {
	var req CancelRequest
	if err := Decode(m, &req); err != nil {
		a.counters.Malformed.Add(1)
		return
	}
	a.mu.Lock()
	cj := a.coord[req.Job]
	a.mu.Unlock()
	if cj == nil {
		return // the coordinator answers
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := a.recordCancel(ctx, req.Job); err != nil {
		// The job stops here all the same; only a takeover during the stop
		// would run it again.
		a.log.Error().Err(err).Str("job", req.Job).Msg("record the cancel in the job registry")
	}
	cj.cancelled.Store(true)
	cj.job.Stop("cancelled")
	a.log.Info().Str("job", req.Job).Msg("job cancelled: a stop checkpoint is taken and the job ends")
	a.reply(m, CmdReply{})
}

// recordCancel marks job's record as cancel requested, retrying when the
// record changed between the read and the write (its coordinator records
// restarts and rescales in it too).
func (a *Agent) recordCancel(ctx context.Context, job string) error {
	for {
		rec, rev, err := a.jobs.Get(ctx, job)
		if err != nil {
			return err
		}
		if rec.State != cluster.JobRunning || rec.CancelRequested {
			return nil
		}
		rec.CancelRequested = true
		_, err = a.jobs.Update(ctx, rec, rev)
		if !errors.Is(err, cluster.ErrJobChanged) {
			return err
		}
	}
}

// endCancelled records as cancelled a job whose lease this node won after
// its coordinator had accepted a cancel and before it recorded the end
// (it died or lost its lease while the job stopped), and gives the lease up.
func (a *Agent) endCancelled(ctx context.Context, rec cluster.JobRecord) {
	a.log.Warn().Str("job", rec.Name).Str("old_coordinator", rec.Coordinator).
		Msg("not taking the job over: it was cancelled; recording its end")
	rec.State, rec.Coordinator = cluster.JobCancelled, a.cfg.ID
	if _, err := a.jobs.Put(ctx, rec); err != nil {
		a.log.Error().Err(err).Str("job", rec.Name).Msg("record the cancelled job's end")
	}
	a.release(ctx, rec.Name)
	a.publishEvent(JobEvent{Job: rec.Name, State: cluster.JobCancelled, Coordinator: a.cfg.ID})
}
