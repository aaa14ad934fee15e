package keygroups

import "fmt"

// Move is one key group changing owner in a rescale.
type Move struct {
	Group int `msgpack:"g"`
	From  int `msgpack:"from"`
	To    int `msgpack:"to"`
}

// Rescale returns the table for newP instances that Rebalance plans from t
// (fewest key groups moved, every instance within one group of the others),
// at epoch t.Epoch+1, and the key groups that change owner, ascending. t is
// not changed. Keeping the parallelism still makes a new epoch; it moves
// nothing when t is balanced.
func (t *Table) Rescale(newP int) (*Table, []Move, error) {
	nt, err := Rebalance(t, newP)
	if err != nil {
		return nil, nil, fmt.Errorf("rescale key groups: %w", err)
	}
	var moves []Move
	for g, o := range t.Owners {
		if n := nt.Owners[g]; n != o {
			moves = append(moves, Move{Group: g, From: int(o), To: int(n)})
		}
	}
	return nt, moves, nil
}
