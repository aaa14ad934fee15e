// Package prefetch asks the processor to start loading memory that a
// caller will read soon, so that the cache misses of a batch of scattered
// reads overlap instead of each waiting in turn.
//
// A prefetch is a hint: it reads nothing the program sees, never faults,
// and does nothing where the architecture has no such instruction (every
// one but amd64 here). Bytes reads the header it is given with a plain
// machine load outside the Go memory model, so it may be handed the header
// of a value another goroutine is changing: a torn or stale header only
// makes the hint useless.
package prefetch

// MaxBytes bounds how much of a string or slice Bytes asks for.
const MaxBytes = 4096
