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
	if p != nil {
		select {
		case g := <-p.groups:
			if cap(g) >= size {
				return g[:0]
			}
		default:
		}
	}
	return make([]uint16, 0, size)
}

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

// Recycle takes back a batch of T (Records or Grouped) that nothing
// references any more; other batches, and batches beyond the pool's bound,
// are left to the GC.
func (p *Pool[T]) Recycle(b Batch) {
	if p == nil {
		return
	}
	if g, ok := b.(Grouped[T]); ok && cap(g.Groups) > 0 {
		select {
		case p.groups <- g.Groups[:0]:
		default:
		}
	}
	recs, ok := RecordsOf[T](b)
	if !ok || cap(recs) == 0 {
		return
	}
	select {
	case p.free <- recs[:0]:
	default:
	}
}
