package state

import (
	"unsafe"

	"github.com/weirstream/weir/internal/prefetch"
)

// readAhead is how many listed keys' claims the encoder loads at once, in
// a loop that does nothing else, before it claims the first of them: the
// cache misses on a batch of slots overlap, where one key at a time each
// would wait for its own (the claim's compare-and-swap waits for every
// load before it). It then hints that the batch's keys and the bytes their
// values refer to will be read (internal/prefetch), for those misses to
// overlap too. Only loads and hints: the encoder still claims and reads
// one key at a time, so the task never waits for more than the key being
// read.
const readAhead = 16

// claimsAhead is the next batch of listed keys of a table whose values
// carry their claims (valueCodec.claim), on the encoder.
type claimsAhead[V any] struct {
	vals [readAhead]V // by key of the batch: its value in the barrier's map; zero when saved in an overlay
	sum  uint64       // what the loads read, kept so that they stay
}

// load gathers the barrier's value of each of keys (at most readAhead)
// not saved in an overlay, value(j) giving that of keys[j], loads each
// one's claim, and hints that the bytes of each key and of each value
// (codec.prefetch) will be read. A hint reads no value the task may be
// changing: the encoder still claims each key before it reads its value.
func (a *claimsAhead[V]) load(codec *valueCodec[V], keys []string, pre, post *overlay, value func(j int) V) {
	claim := codec.claim
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
	for j := range keys {
		prefetch.Bytes(unsafe.Pointer(&keys[j]))
		if codec.prefetch != nil && claim(a.vals[j]) != nil {
			codec.prefetch(a.vals[j])
		}
	}
}
