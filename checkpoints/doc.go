// Package checkpoints holds the coordinator's checkpoint bookkeeping as a pure
// state machine: when to trigger, which tasks have acknowledged, when to write
// the manifest, when a checkpoint is complete or aborted, which old
// checkpoints to delete, the final checkpoint once every source is idle, and
// whether every sink committed the final or stop checkpoint.
//
// A Coordinator is fed events with the logical time and answers with Actions
// for the coordinator actor to carry out in the order given. It starts no
// goroutines, keeps no timers (the actor calls Tick), does no I/O and does not
// log.
//
// Life of a checkpoint: Trigger (inject barriers at the sources) → every task
// acknowledges → WriteManifest (the actor writes it durably and reports back)
// → Completed (sinks commit), and Delete for checkpoints beyond the newest
// Retain. Up to MaxConcurrent checkpoints (default 1) are in flight at once:
// a newer one may be triggered before older ones are written, but manifests
// are written one at a time, oldest first, so checkpoints complete in the
// order of their ids; one acknowledged by every task before an older one
// ended waits for it (and is not timed out meanwhile). An abort (timeout,
// decline, failed manifest) ends only that checkpoint: the others in flight
// go on. Ids strictly increase and an aborted id is never reused.
package checkpoints
