package actors

// replaying reports whether any input still has restored channel state to
// replay. Until none has, no input's new buffers are processed: channel state
// redistributed at a new parallelism may sit on another channel than the
// newer records of the same key (inflight.Redistribute's contract).
func (in *inputs) replaying() bool {
	for _, c := range in.chans {
		if len(c.replay) > 0 {
			return true
		}
	}
	return false
}
