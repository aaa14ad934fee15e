package plan

import (
	"fmt"

	"github.com/weirstream/weir/keygroups"
)

// NeedsTable reports whether the operator needs a key-group table: it is
// keyed, or an input edge routes to it by key group.
func (op *Operator) NeedsTable() bool {
	if op.Keyed {
		return true
	}
	for _, e := range op.Inputs {
		if e.Partitioner == KeyGroupHash {
			return true
		}
	}
	return false
}

// assignFirstTables gives every operator that needs a key-group table and has
// none the job's first table (keygroups.Contiguous, epoch 0). This is the only
// place a table is computed from (maxParallelism, parallelism); a restore sets
// Table beforehand from the checkpoint's manifest.
func (j *Job) assignFirstTables() error {
	for _, op := range j.Operators {
		if op.Table != nil || !op.NeedsTable() {
			continue
		}
		t, err := keygroups.Contiguous(j.MaxParallelism, op.Parallelism)
		if err != nil {
			return fmt.Errorf("operator %q: %w", op.Name, err)
		}
		op.Table = t
	}
	return nil
}

// checkTables checks that every operator that needs a key-group table has a
// valid one for its parallelism and the job's maxParallelism.
func (j *Job) checkTables() error {
	for _, op := range j.Operators {
		if !op.NeedsTable() {
			continue
		}
		if err := op.Table.Validate(); err != nil {
			return fmt.Errorf("operator %q: %w", op.Name, err)
		}
		if op.Table.Parallelism != op.Parallelism || op.Table.MaxParallelism != j.MaxParallelism {
			return fmt.Errorf("operator %q: key-group table for %d of %d key groups, operator has parallelism %d of %d",
				op.Name, op.Table.Parallelism, op.Table.MaxParallelism, op.Parallelism, j.MaxParallelism)
		}
	}
	return nil
}
