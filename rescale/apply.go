package rescale

import (
	"fmt"

	"github.com/weirstream/weir/internal/plan"
)

// Apply makes p's outcome the plan j runs: each changed operator's
// parallelism and table, and each implicit edge's partitioner chosen again.
// j must be the plan whose topology p was computed from; it refuses,
// changing nothing, a j whose operators differ from p's topology.
func (p *Plan) Apply(j *plan.Job) error {
	byName := map[string]*plan.Operator{}
	for _, op := range j.Operators {
		byName[op.Name] = op
	}
	for _, c := range p.Changes {
		op := byName[c.Operator]
		if op == nil {
			return fmt.Errorf("apply rescale %d: job %q has no operator %q", p.Input.Seq, j.Name, c.Operator)
		}
		if op.Parallelism != c.From {
			return fmt.Errorf("apply rescale %d: operator %q runs at %d, the plan rescales it from %d", p.Input.Seq, c.Operator, op.Parallelism, c.From)
		}
	}
	for _, c := range p.Changes {
		op := byName[c.Operator]
		op.Parallelism = c.To
		if c.New != nil {
			op.Table = c.New.Clone()
		}
	}
	for _, e := range j.Edges {
		if e.Implicit {
			e.Partitioner = plan.ImplicitPartitioner(e.From.Parallelism, e.To.Parallelism)
		}
	}
	return nil
}
