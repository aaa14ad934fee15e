package weir

import "github.com/rs/zerolog"

// DefaultRunConfig is the configuration Run starts from before applying its
// options. It differs from `node run`'s defaults in two things only, so that
// a library call writes nothing its caller did not ask for:
//
//   - Checkpoints: none (CheckpointNone). `node run` takes unaligned,
//     incremental checkpoints every second into ./weir-state, keeping 3
//     (DefaultCheckpointConfig); WithCheckpoints(DefaultCheckpointConfig())
//     gives Run the same. Any CheckpointConfig is incremental unless it
//     sets FullCheckpoints (or SyncSnapshots).
//   - Logs: discarded. `node run` writes zerolog JSON lines at level info to
//     stderr; WithLogger gives Run a logger.
//
// The rest is the same: restarts (DefaultSupervision), batching and flow
// control (zero RuntimeOptions, which take the runtime's defaults), and each
// operator's parallelism as the graph sets it.
func DefaultRunConfig() RunConfig {
	sv := DefaultSupervision()
	return RunConfig{
		Logger:      zerolog.Nop(),
		Checkpoint:  CheckpointConfig{Mode: CheckpointNone},
		Supervision: &sv,
	}
}
