// Package barriers holds the checkpoint-barrier alignment logic of a task as a
// pure state machine: aligned, unaligned and aligned-with-timeout checkpoints.
//
// An Aligner is fed events (a buffer is about to be processed, a barrier
// arrived, a timer fired, the coordinator aborted a checkpoint) together with
// the logical time, and answers with Actions for the task actor to carry out
// in the order given. It starts no goroutines, keeps no timers, does no I/O
// and does not log; the task actor is a thin shell around it.
//
// Protocol recap. Every input delivers buffers with per-channel sequence
// numbers 1, 2, 3, ... A barrier of checkpoint k carries lastSeq, the seq of
// the last buffer its producer sent on that channel before the barrier.
// Delivered unaligned, the barrier overtakes queued data and brings copies of
// the buffers it overtook; delivered aligned, it arrives after every buffer
// with seq <= lastSeq was processed and blocks its input until Unblock.
//
// The channel state of an unaligned checkpoint, per input, is what OnBuffer
// reported as capture=true plus the overtaken copies selected by
// CaptureOvertaken; together they are exactly the buffers with seq in
// (processed at snapshot, lastSeq], none missing and none twice.
//
// Several checkpoints may be in progress at once (Config.MaxConcurrent > 1):
// barriers arrive on every input in increasing id order, so they complete in
// that order, and a buffer taken from an input after the snapshots of two of
// them and before either's barrier belongs to the channel state of both
// (CapturedBy names them).
//
// A size limit (Config.MaxInflightBytes) bounds what a checkpoint holds back
// or stores per task: an aligning checkpoint switches to unaligned once the
// data queued behind its barriers at blocked inputs exceeds it
// (OnBlockedBytes), and an overtaking barrier met before the snapshot whose
// overtaken data exceeds it falls back to alignment on its input
// (AlignInput): the snapshot waits until that input processed its data up to
// the barrier, so that data is in the snapshot, not in the channel state.
// The input's data after the barrier, delivered already, waits until the
// barrier comes again or its checkpoint ends (Holds): with several
// checkpoints in flight, not until an older barrier sent back before and
// now ignored unblocks the input.
package barriers
