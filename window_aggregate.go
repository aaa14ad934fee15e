package weir

// Aggregator folds a window's records into an accumulator as they arrive,
// so a window keeps one Acc per key instead of its records.
type Aggregator[T, Acc, R any] struct {
	// Init makes an empty accumulator.
	Init func() Acc
	// Add folds one record in.
	Add func(acc Acc, rec T) Acc
	// Merge combines two accumulators (session windows merge; required there).
	Merge func(a, b Acc) Acc
	// Result is the window's output from its accumulator.
	Result func(acc Acc) R
}

// Count is the Aggregator that counts a window's records.
func Count[T any]() Aggregator[T, int64, int64] {
	return Aggregator[T, int64, int64]{
		Init:   func() int64 { return 0 },
		Add:    func(n int64, _ T) int64 { return n + 1 },
		Merge:  func(a, b int64) int64 { return a + b },
		Result: func(n int64) int64 { return n },
	}
}

// reduceAcc is the accumulator of Reduce: the value so far, once there is one.
type reduceAcc[T any] struct {
	V   T    `msgpack:"v"`
	Set bool `msgpack:"set"`
}

// reducer makes the Aggregator of a reduce function.
func reducer[T any](fn func(a, b T) T) Aggregator[T, reduceAcc[T], T] {
	merge := func(a, b reduceAcc[T]) reduceAcc[T] {
		switch {
		case !a.Set:
			return b
		case !b.Set:
			return a
		}
		return reduceAcc[T]{V: fn(a.V, b.V), Set: true}
	}
	return Aggregator[T, reduceAcc[T], T]{
		Init:   func() reduceAcc[T] { return reduceAcc[T]{} },
		Add:    func(a reduceAcc[T], rec T) reduceAcc[T] { return merge(a, reduceAcc[T]{V: rec, Set: true}) },
		Merge:  merge,
		Result: func(a reduceAcc[T]) T { return a.V },
	}
}
