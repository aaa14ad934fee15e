package store

import "fmt"

// checkSplits checks every source split in m: split ID of Of (0 ≤ ID < Of)
// at a non-negative offset, and no split stored twice for one operator.
func checkSplits(m *Manifest) error {
	seen := map[string]map[[2]int]int{}
	for _, ts := range m.Tasks {
		for _, s := range ts.Splits {
			if s.Of < 1 || s.ID < 0 || s.ID >= s.Of || s.Offset < 0 {
				return fmt.Errorf("checkpoint %d, task %s[%d]: source split %d of %d at offset %d is not a split: %w",
					m.CheckpointID, ts.Operator, ts.Instance, s.ID, s.Of, s.Offset, ErrCorrupt)
			}
			if seen[ts.Operator] == nil {
				seen[ts.Operator] = map[[2]int]int{}
			}
			k := [2]int{s.ID, s.Of}
			if other, dup := seen[ts.Operator][k]; dup {
				return fmt.Errorf("checkpoint %d, operator %s: source split %d of %d stored by instances %d and %d: %w",
					m.CheckpointID, ts.Operator, s.ID, s.Of, other, ts.Instance, ErrCorrupt)
			}
			seen[ts.Operator][k] = ts.Instance
		}
	}
	return nil
}
