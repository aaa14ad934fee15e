package plan

// poolBatches bounds the batches a Pool keeps for reuse.
const poolBatches = 64

// Pool recycles the batches of one edge: a consumer hands back a batch it has
// processed and no longer references, and a producer's Writer fills it again
// instead of allocating. It is safe for concurrent use; a nil *Pool recycles
// nothing.
type Pool[T any] struct {
	free   chan []T
	groups chan []uint16 // the key groups of Grouped batches
}

// NewPool makes an empty pool.
func NewPool[T any]() *Pool[T] {
	return &Pool[T]{free: make(chan []T, poolBatches), groups: make(chan []uint16, poolBatches)}
}

// getGroups returns an empty key-group slice with room for size records.
func (p *Pool[T]) getGroups(size int) []uint16 {
	if p == nil {
		return make([]uint16, 0, size)
	}
	return take(p.groups, size)
}

// get returns an empty batch with room for size records.
func (p *Pool[T]) get(size int) []T {
	if p == nil {
		return make([]T, 0, size)
	}
	return take(p.free, size)
}

// spare returns a recycled batch of any capacity, or nil when there is none.
func (p *Pool[T]) spare() []T {
	if p == nil {
		return nil
	}
	select {
	case s := <-p.free:
		return s[:0]
	default:
		return nil
	}
}

// take returns an empty slice with room for size elements: a free one from
// the channel when there is one big enough, else a new one.
func take[E any](free chan []E, size int) []E {
	select {
	case s := <-free:
		if cap(s) >= size {
			return s[:0]
		}
	default:
	}
	return make([]E, 0, size)
}

// put hands an emptied slice back to the channel unless it is full.
func put[E any](free chan []E, s []E) {
	select {
	case free <- s[:0]:
	default:
	}
}

// Recycle takes back a batch of T (Records or Grouped) that nothing
// references any more; other batches, and batches beyond the pool's bound,
// are left to the GC.
func (p *Pool[T]) Recycle(b Batch) {
	if p == nil {
		return
	}
	if g, ok := b.(Grouped[T]); ok && cap(g.Groups) > 0 {
		put(p.groups, g.Groups)
	}
	recs, ok := RecordsOf[T](b)
	if ok && cap(recs) > 0 {
		put(p.free, recs)
	}
}
