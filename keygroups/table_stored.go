package keygroups

import (
	"fmt"
	"slices"
)

// FromOwners returns the table stored in a checkpoint manifest: owners[g] is
// the instance that owns key group g among p instances, at the given epoch.
// owners is copied. It refuses, wrapping ErrInvalidTable, a slice whose length
// is not max, an owner outside [0, p), and an instance that owns no key group:
// Contiguous and Rescale never make such a table (p ≤ max), so a stored one is
// corrupt or belongs to another operator.
func FromOwners(max, p int, epoch uint64, owners []int32) (*Table, error) {
	t := &Table{MaxParallelism: max, Parallelism: p, Epoch: epoch, Owners: slices.Clone(owners)}
	if err := t.Validate(); err != nil {
		return nil, fmt.Errorf("stored key-group table (epoch %d): %w", epoch, err)
	}
	return t, nil
}
