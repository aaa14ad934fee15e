// Package transport carries weir actor messages between node processes over
// core NATS.
//
// Subjects (see subjects.go) are readable with the NATS command-line tool:
//
//	weir.<job>.data.<edge>.<from>.<to>    buffers, barriers, end-of-stream
//	weir.<job>.credit.<edge>.<from>.<to>  credits, consumer → producer
//	weir.<job>.ctl.<node>                 control for the job's part on a node
//	weir.<job>.ctl.coordinator            control for the job's coordinator
//	weir.node.<node>.<kind>               node traffic (kinds hb, cmd)
//
// Each message is an [Envelope]: metadata in Weir-* headers, a msgpack body
// in the data. [FromMsg] checks everything that arrives and reports bad
// input as an error wrapping [ErrMalformed], never a panic. [SeqChecker] and
// [SeqStamper] number the messages of each link so that a lost, duplicated
// or reordered message is detected instead of silently skipped.
package transport
