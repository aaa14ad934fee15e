package weir

import (
	"github.com/rs/zerolog"

	"github.com/weirstream/weir/actors"
)

// logRestorePlan logs each operator restored at another parallelism than
// its checkpoint's: the key groups that move against the fewest possible,
// and each source without splits kept at the checkpoint's parallelism.
func logRestorePlan(log zerolog.Logger, checkpoint uint64, rp actors.RestorePlan) {
	for _, o := range rp.Operators {
		switch {
		case o.Pinned:
			log.Warn().Uint64("checkpoint", checkpoint).Str("operator", o.Name).Int("parallelism", o.To).
				Msg("source resumes at its checkpoint's parallelism: it is not read by splits, its offsets are per instance")
		case o.Rescaled() && o.Table != nil:
			log.Info().Uint64("checkpoint", checkpoint).Str("operator", o.Name).Int("from", o.From).Int("to", o.To).
				Int("key_groups_moved", o.Moved).Int("key_groups_min", o.Minimum).Int("key_groups", o.Table.MaxParallelism).
				Uint64("epoch", o.Table.Epoch).Msg("restoring at a new parallelism")
		case o.Rescaled():
			log.Info().Uint64("checkpoint", checkpoint).Str("operator", o.Name).Int("from", o.From).Int("to", o.To).
				Msg("restoring at a new parallelism")
		}
	}
}
