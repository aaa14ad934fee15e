package weir

import "github.com/weirstream/weir/internal/plan"

// Stream is the typed output of an operator; pass it to the next operator.
type Stream[T any] struct {
	g    *Graph
	up   upstream
	pool *plan.Pool[T] // batches of this stream, recycled by its consumers
	// eventTime reads a record's event time (Unix nanoseconds); nil when the
	// stream has none (see WithTimestamps).
	eventTime func(T) int64
}

func newStream[T any](g *Graph, op *plan.Operator) Stream[T] {
	pool := plan.NewPool[T]()
	return Stream[T]{g: g, pool: pool, up: upstream{from: op, codec: plan.MsgpackCodec[T]{Pool: pool}, recycle: pool.Recycle,
		newWriter: func(cfg plan.WriterConfig) (plan.EdgeWriter, error) { return plan.NewWriter(cfg, nil, pool) }}}
}

func (s Stream[T]) with(p plan.Partitioner) Stream[T] {
	s.up.partitioner, s.up.explicit = p, true
	return s
}

// Forward sends instance i's records to instance i of the next operator (the
// default when both have the same parallelism).
func (s Stream[T]) Forward() Stream[T] { return s.with(plan.Forward) }

// Rebalance spreads records round robin over the next operator's instances (the
// default when parallelism differs).
func (s Stream[T]) Rebalance() Stream[T] { return s.with(plan.Rebalance) }

// Shuffle sends each record to a random instance of the next operator.
func (s Stream[T]) Shuffle() Stream[T] { return s.with(plan.Shuffle) }

// Broadcast sends every record to every instance of the next operator.
func (s Stream[T]) Broadcast() Stream[T] { return s.with(plan.Broadcast) }

// Graph is the graph the stream belongs to.
func (s Stream[T]) Graph() *Graph { return s.g }
