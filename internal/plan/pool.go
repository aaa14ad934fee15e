package plan

// poolBatches bounds the batches a Pool keeps for reuse.
const poolBatches = 64

// Pool recycles the batches of one edge: a consumer hands back a batch it has
// processed and no longer references, and a producer's Writer fills it again
// instead of allocating. It is safe for concurrent use; a nil *Pool recycles
// nothing.
type Pool[T any] struct{ free chan []T }

// NewPool makes an empty pool.
func NewPool[T any]() *Pool[T] { return &Pool[T]{free: make(chan []T, poolBatches)} }

// get returns an empty batch with room for size records.
func (p *Pool[T]) get(size int) []T {
	if p != nil {
		select {
		case b := <-p.free:
			if cap(b) >= size {
				return b[:0]
			}
		default:
		}
	}
	return make([]T, 0, size)
}

// Recycle takes back a batch of Records[T] that nothing references any more;
// other batches, and batches beyond the pool's bound, are left to the GC.
func (p *Pool[T]) Recycle(b Batch) {
	recs, ok := b.(Records[T])
	if p == nil || !ok || cap(recs) == 0 {
		return
	}
	select {
	case p.free <- recs[:0]:
	default:
	}
}
