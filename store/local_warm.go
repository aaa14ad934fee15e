package store

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
)

// pageSize is the smallest page a touch faults in.
const pageSize = 4096

// warmMemory is memory a node faults in while it rejoins the cluster, for
// the restores it expects from the local state it holds: a node that starts
// again reads that state back into memory its process never touched, and
// where page faults are slow they are most of the read (see sectionSlab).
// The time between the start of the process and the first restore placed
// on it (joining, placement, preparing the job's part) is otherwise idle.
// Restores take their shared buffers from it (take) until it is used up or
// its time runs out; what is left then goes back to the collector.
type warmMemory struct {
	mu      sync.Mutex
	pending bool   // being faulted in, or offered (buf)
	gen     uint64 // counts Prewarm's accepted calls: an expiry is for one of them
	buf     []byte // faulted in and not taken yet
	timer   *time.Timer
	halt    atomic.Bool
	wg      sync.WaitGroup
	log     zerolog.Logger
}

// Prewarm faults in n bytes of memory in the background for the restores
// of the local state this node holds (n is what its inventory counts for
// the checkpoints it expects to restore). They take it over the next keep;
// after that what is left is given back. It does nothing and returns false
// when n is below what one restore would share a buffer for (slabMin) or
// above slabMax, when keep is not positive, when the store is closed, or
// while memory of an earlier call is still being faulted in or offered.
// Close stops it.
func (l *Local) Prewarm(n int64, keep time.Duration, log zerolog.Logger) bool {
	w := &l.warm
	if n < slabMin || n > slabMax || keep <= 0 || l.closed.Load() {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.pending || w.halt.Load() {
		return false
	}
	w.pending, w.log = true, log
	w.gen++
	w.wg.Add(1)
	go w.fault(n, keep, w.gen)
	return true
}

// fault allocates n bytes, touches every page of them and offers them to
// take for keep (gen: of the Prewarm call).
func (w *warmMemory) fault(n int64, keep time.Duration, gen uint64) {
	defer w.wg.Done()
	start := time.Now()
	b := make([]byte, n)
	hugePages(b, true)
	for i := 0; i < len(b); i += pageSize {
		if i%(2<<20) == 0 && w.halt.Load() {
			return // closed: stays pending, nothing more is offered
		}
		b[i] = 0
	}
	hugePages(b, false) // the pages faulted in stay huge
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.halt.Load() {
		return
	}
	w.buf = b
	w.timer = time.AfterFunc(keep, func() { w.expire(gen) })
	w.log.Info().Int64("bytes", n).Dur("took", time.Since(start)).Dur("kept_for", keep).
		Msg("memory for restoring local state faulted in")
}

// take returns n bytes of the warm memory, of capacity n, or nil when less
// than n is left (or none was faulted in yet: the restore allocates its
// own, as without it). A nil w has none.
func (w *warmMemory) take(n int64) []byte {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if n <= 0 || int64(len(w.buf)) < n {
		return nil
	}
	b := w.buf[:n:n]
	w.buf = w.buf[n:]
	if len(w.buf) < slabMin {
		w.releaseLocked("used")
	}
	return b
}

// expire gives back what is left of Prewarm call gen once the restores had
// their time (a later call's memory is not its to give back).
func (w *warmMemory) expire(gen uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if gen == w.gen {
		w.releaseLocked("not taken in time")
	}
}

// releaseLocked drops the memory not taken (it is freed once the restored
// state sharing its allocation is) and stops the timer.
func (w *warmMemory) releaseLocked(why string) {
	if w.timer != nil {
		w.timer.Stop()
		w.timer = nil
	}
	w.pending = false
	if w.buf == nil {
		return
	}
	w.log.Info().Int("bytes_left", len(w.buf)).Str("reason", why).Msg("memory for restoring local state given back")
	w.buf = nil
}

// close stops faulting memory in, waits for it and drops what is left.
func (w *warmMemory) close() {
	w.mu.Lock()
	w.halt.Store(true) // under mu: no Prewarm starts a fault-in after this
	w.mu.Unlock()
	w.wg.Wait()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.timer != nil {
		w.timer.Stop()
		w.timer = nil
	}
	w.buf = nil
}
