package actors

import (
	"fmt"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/weirstream/weir/internal/plan"
	taskid "github.com/weirstream/weir/internal/task"
	"github.com/weirstream/weir/rescale"
)

// rescaleOf is the live rescale whose next plan op belongs to (an instance
// it adds runs on that plan), nil for an operator of the job's own plan.
func (a *jobActor) rescaleOf(op *plan.Operator) *rescale.Plan {
	if a.rs == nil || a.rs.run == nil || op.ID >= len(a.rs.run.next.Operators) || a.rs.run.next.Operators[op.ID] != op {
		return nil
	}
	return a.rs.run.plan
}

// rescaleCommitParts tells every other node's part of the job that rescale
// p committed: the tasks they start from now on run on its plan.
func (a *jobActor) rescaleCommitParts(p *rescale.Plan) {
	if a.cl == nil {
		return
	}
	a.toParts(&rescaleCommitPartMsg{plan: p, run: a.cl.run}, "tell node the rescale committed")
}

// rescaleCommitPart makes a committed rescale's plan this part's.
func (f *fragment) rescaleCommitPart(ctx actor.Context, m *rescaleCommitPartMsg) {
	if !f.ofThisRun(m.run, "rescale commit") {
		return
	}
	next, err := f.job.planAfter(m.plan)
	if err != nil {
		f.end(ctx, fmt.Errorf("rescale %d committed: %w", m.plan.Input.Seq, err))
		return
	}
	f.job.mu.Lock()
	for i, op := range f.job.Plan.Operators {
		op.Parallelism, op.Table = next.Operators[i].Parallelism, next.Operators[i].Table
	}
	for i, e := range f.job.Plan.Edges {
		e.Partitioner = next.Edges[i].Partitioner
	}
	f.job.mu.Unlock()
	f.job.log.Info().Uint64("rescale", m.plan.Input.Seq).Str("changes", m.plan.Summary()).Msg("rescale committed: the part runs on its plan")
}

// spawnOperator is the operator a spawn request starts an instance of: of
// the plan after the live rescale that adds it, or of the part's plan.
func (f *fragment) spawnOperator(m *spawnTaskMsg) (*plan.Operator, error) {
	p := f.job.Plan
	if m.rescale != nil {
		next, err := f.job.planAfter(m.rescale)
		if err != nil {
			return nil, err
		}
		p = next
	}
	if m.op < 0 || m.op >= len(p.Operators) || m.instance < 0 || m.instance >= p.Operators[m.op].Parallelism {
		return nil, fmt.Errorf("spawn request for task %d[%d], which the job does not have", m.op, m.instance)
	}
	return p.Operators[m.op], nil
}

// RescaleStats are a job's committed live rescales: how many, and the
// figures of the latest.
type RescaleStats struct {
	Count int
	Last  *RescaleRecord
}

// RescaleRecord is what one committed live rescale changed and measured.
type RescaleRecord struct {
	Seq     uint64
	Changes []RescaleChange
	rescale.Result
}

// RescaleChange is one operator's parallelism before and after a rescale.
type RescaleChange struct {
	Operator string
	From, To int
}

// Rescales returns the job's committed live rescales.
func (j *Job) Rescales() RescaleStats {
	j.mu.Lock()
	defer j.mu.Unlock()
	s := j.rescaled
	if s.Last != nil {
		last := *s.Last
		last.Changes = append([]RescaleChange(nil), last.Changes...)
		s.Last = &last
	}
	return s
}

// noteRescale records a committed rescale.
func (j *Job) noteRescale(p *rescale.Plan, res rescale.Result) {
	rec := &RescaleRecord{Seq: res.Rescale, Result: res}
	for _, c := range p.Changes {
		rec.Changes = append(rec.Changes, RescaleChange{Operator: c.Operator, From: c.From, To: c.To})
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	j.rescaled.Count++
	j.rescaled.Last = rec
}

// unplace forgets the node of an instance a rescale removed or an aborted
// one added (Job.Placement lists the instances the job runs).
func (a *jobActor) unplace(id taskid.ID) {
	if a.cl == nil {
		return
	}
	delete(a.cl.placed, id)
	a.job.mu.Lock()
	delete(a.job.placement, id.String())
	a.job.mu.Unlock()
}

// rescalePlaced is the node the running rescale's plan places an instance
// it adds on (ok false: the plan places none there, or that node was lost).
func (a *jobActor) rescalePlaced(op *plan.Operator, i int) (string, bool) {
	p := a.rescaleOf(op)
	if p == nil {
		return "", false
	}
	for _, pl := range p.Placement {
		if pl.Operator == op.Name && pl.Instance == i && !a.cl.r.isLost(pl.Node) {
			return pl.Node, true
		}
	}
	return "", false
}
