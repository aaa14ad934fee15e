package inflight

import (
	"fmt"

	"github.com/weirstream/weir/store"
)

// LabelRounds sets each batch's Round from its channel's stored rounds, in
// order; a channel stored without rounds is one round, labelled checkpoint.
// Rounds that do not add up to the batches are corruption.
func LabelRounds(batches []Batch, rounds []store.ChannelRound, checkpoint uint64) error {
	if checkpoint == 0 {
		return fmt.Errorf("replay rounds of checkpoint 0: %w", ErrCorrupt)
	}
	if len(rounds) == 0 {
		for i := range batches {
			batches[i].Round = checkpoint
		}
		return nil
	}
	i := 0
	for _, r := range rounds {
		if r.Buffers < 1 || r.Checkpoint == 0 || r.Checkpoint > checkpoint || i+r.Buffers > len(batches) {
			return fmt.Errorf("replay round of checkpoint %d with %d buffers, after %d of %d buffers: %w", r.Checkpoint, r.Buffers, i, len(batches), ErrCorrupt)
		}
		for end := i + r.Buffers; i < end; i++ {
			batches[i].Round = r.Checkpoint
		}
	}
	if i != len(batches) {
		return fmt.Errorf("replay rounds cover %d of %d buffers: %w", i, len(batches), ErrCorrupt)
	}
	return nil
}

// RoundsOf is LabelRounds' inverse for channel state captured into
// checkpoint: the runs of equal Round, a batch without one (new input)
// labelled checkpoint. It is nil when all are of checkpoint.
func RoundsOf(batches []Batch, checkpoint uint64) []store.ChannelRound {
	var rounds []store.ChannelRound
	for _, b := range batches {
		r := b.Round
		if r == 0 {
			r = checkpoint
		}
		if n := len(rounds); n > 0 && rounds[n-1].Checkpoint == r {
			rounds[n-1].Buffers++
			continue
		}
		rounds = append(rounds, store.ChannelRound{Checkpoint: r, Buffers: 1})
	}
	if len(rounds) == 1 && rounds[0].Checkpoint == checkpoint {
		return nil
	}
	return rounds
}
