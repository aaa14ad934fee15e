package weir

import "github.com/weirstream/weir/actors"

// WithJobObserver hands the running job to fn once it is submitted, so a
// caller can watch it while Run waits (its metrics, dumps, checkpoints: what
// the web page shows). fn must not block.
func WithJobObserver(fn func(*actors.Job)) RunOption { return func(c *RunConfig) { c.OnJob = fn } }
