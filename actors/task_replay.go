package actors

// replayRound is the oldest replay round any input's restored channel state
// still has at its head, 0 when no input has any left. Inputs replay round
// by round, and no input's new buffers are processed until none is left:
// channel state redistributed at a new parallelism may sit on another
// channel than the newer records of the same key (inflight.Redistribute's
// contract), and a checkpoint taken during a replay stores the rest under
// its older round, ahead of what it captured after it.
func (in *inputs) replayRound() uint64 {
	var round uint64
	for _, c := range in.chans {
		if len(c.replay) > 0 && (round == 0 || c.replay[0].round < round) {
			round = c.replay[0].round
		}
	}
	return round
}
