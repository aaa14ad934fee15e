package state

// readAhead is how many listed keys' claims the encoder loads at once, in
// a loop that does nothing else, before it claims the first of them: the
// cache misses on a batch of slots overlap, where one key at a time each
// would wait for its own (the claim's compare-and-swap waits for every
// load before it). Only loads: the encoder still claims and reads one key
// at a time, so the task never waits for more than the key being read.
const readAhead = 16

// claimsAhead is the next batch of listed keys of a table whose values
// carry their claims (valueCodec.claim), on the encoder.
type claimsAhead[V any] struct {
	vals [readAhead]V // by key of the batch: its value in the barrier's map; zero when saved in an overlay
	sum  uint64       // what the loads read, kept so that they stay
}

// load gathers the barrier's value of each of keys (at most readAhead)
// not saved in an overlay, value(j) giving that of keys[j], then loads
// each one's claim.
func (a *claimsAhead[V]) load(claim func(V) *entryClaim, keys []string, pre, post *overlay, value func(j int) V) {
	var zero V
	for j, key := range keys {
		if pre.has(key) || post.has(key) {
			a.vals[j] = zero
			continue
		}
		a.vals[j] = value(j)
	}
	for j := range keys {
		if cl := claim(a.vals[j]); cl != nil {
			a.sum += cl.word.Load()
		}
	}
}
