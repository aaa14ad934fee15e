// Package supervision holds weir's restart decisions as pure state machines:
// which task instances form a pipelined region that must restart together,
// OTP-style restart intensity (at most MaxRestarts restarts within Window,
// else escalate) with exponential backoff, and the supervisor of one job
// that turns failures into stop, restart and fail actions and carries each
// restart through: it waits for every stopped task to end (or its node to be
// lost) and for a manifest being written, restarts from the latest
// completed checkpoint, says when the respawned region is ready to wire,
// and measures the recovery time to its first record.
//
// The reference semantics are Erlang/OTP supervisors: a failure restarts the
// smallest subtree that can be restored consistently (a region, from the
// latest completed checkpoint) while the rest keeps running; too many
// restarts in a window escalate to the parent. protoactor's own strategies
// never escalate, so the actors carry out what this package decides.
//
// Nothing here starts goroutines, keeps timers, does I/O or logs. Time is
// logical (a time.Duration since any fixed origin, never decreasing); the
// caller feeds events and Tick and carries out the returned actions in order.
package supervision
