package weir

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/keygroups"
)

// WithOperatorParallelism runs the named operators at the given parallelism
// instead of the graph's (operator name → instances). On a restore it is the
// parallelism the restore rescales to, except that a source resumes only at
// its checkpoint's parallelism: naming a source at another one is refused.
func WithOperatorParallelism(set map[string]int) RunOption {
	return func(r *RunConfig) { r.OperatorParallelism = set }
}

// applyOperatorParallelism sets the parallelism of the operators named in set
// and gives each the job's first key-group table for it; edges whose
// partitioner the graph chose from the parallelisms choose again. An unknown
// operator, or a parallelism outside 1..maxParallelism, is an error naming it.
func applyOperatorParallelism(p *plan.Job, set map[string]int) error {
	if len(set) == 0 {
		return nil
	}
	byName := make(map[string]*plan.Operator, len(p.Operators))
	names := make([]string, 0, len(p.Operators))
	for _, op := range p.Operators {
		byName[op.Name] = op
		names = append(names, op.Name)
	}
	for _, name := range slices.Sorted(maps.Keys(set)) {
		n := set[name]
		op, ok := byName[name]
		switch {
		case !ok:
			return fmt.Errorf("job %s has no operator %q (its operators: %s)", p.Name, name, strings.Join(names, ", "))
		case n < 1 || n > p.MaxParallelism:
			return fmt.Errorf("operator %q: parallelism %d outside 1..%d (the job's maxParallelism)", name, n, p.MaxParallelism)
		}
		op.Parallelism = n
		if op.NeedsTable() {
			t, err := keygroups.Contiguous(p.MaxParallelism, n)
			if err != nil {
				return fmt.Errorf("operator %q: %w", name, err)
			}
			op.Table = t
		}
	}
	for _, e := range p.Edges {
		if e.Implicit {
			e.Partitioner = plan.ImplicitPartitioner(e.From.Parallelism, e.To.Parallelism)
		}
	}
	return p.Validate()
}
