package inflight

import (
	"fmt"

	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/keygroups"
)

// validate checks that the spec describes a possible change of parallelism.
func (s Spec) validate() error {
	if s.OldParallelism < 1 || s.NewParallelism < 1 {
		return fmt.Errorf("consumer parallelism %d → %d, want at least 1: %w", s.OldParallelism, s.NewParallelism, ErrRedistribute)
	}
	hashed := false
	for k, in := range s.Inputs {
		if in.OldProducers < 1 || in.NewProducers < 1 {
			return fmt.Errorf("input %d: producer parallelism %d → %d, want at least 1: %w", k, in.OldProducers, in.NewProducers, ErrRedistribute)
		}
		switch in.Partitioner {
		case plan.Forward:
			if in.OldProducers != s.OldParallelism || in.NewProducers != s.NewParallelism {
				return fmt.Errorf("input %d: forward edge with producers %d → %d and consumers %d → %d, want equal: %w",
					k, in.OldProducers, in.NewProducers, s.OldParallelism, s.NewParallelism, ErrRedistribute)
			}
		case plan.Rebalance, plan.Shuffle, plan.Broadcast:
		case plan.KeyGroupHash:
			if in.Records == nil {
				return fmt.Errorf("input %d: hash edge without Records: %w", k, ErrRedistribute)
			}
			hashed = true
		default:
			return fmt.Errorf("input %d: unknown partitioner %v: %w", k, in.Partitioner, ErrRedistribute)
		}
	}
	if !hashed {
		return nil
	}
	if err := checkTable("old", s.OldTable, s.OldParallelism); err != nil {
		return err
	}
	if err := checkTable("new", s.NewTable, s.NewParallelism); err != nil {
		return err
	}
	if s.OldTable.MaxParallelism != s.NewTable.MaxParallelism {
		return fmt.Errorf("old table has %d key groups, new table %d: %w", s.OldTable.MaxParallelism, s.NewTable.MaxParallelism, ErrRedistribute)
	}
	return nil
}

// checkTable checks one of the consumer's key-group tables.
func checkTable(which string, t *keygroups.Table, p int) error {
	if err := t.Validate(); err != nil {
		return fmt.Errorf("%s key-group table: %w: %w", which, err, ErrRedistribute)
	}
	if t.Parallelism != p {
		return fmt.Errorf("%s key-group table is for %d instances, consumer parallelism %d: %w", which, t.Parallelism, p, ErrRedistribute)
	}
	return nil
}

// checkChannel checks that c is a channel of the old parallelism.
func (s Spec) checkChannel(c Channel) error {
	if c.Input < 0 || c.Input >= len(s.Inputs) {
		return fmt.Errorf("channel state of input %d, the consumer has %d inputs: %w", c.Input, len(s.Inputs), ErrRedistribute)
	}
	in := s.Inputs[c.Input]
	if c.Producer < 0 || c.Producer >= in.OldProducers || c.Consumer < 0 || c.Consumer >= s.OldParallelism {
		return fmt.Errorf("input %d channel %d→%d does not exist with %d producers and %d consumers: %w",
			c.Input, c.Producer, c.Consumer, in.OldProducers, s.OldParallelism, ErrRedistribute)
	}
	if in.Partitioner == plan.Forward && c.Producer != c.Consumer {
		return fmt.Errorf("input %d: forward channel %d→%d: %w", c.Input, c.Producer, c.Consumer, ErrRedistribute)
	}
	return nil
}
