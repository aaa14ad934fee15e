package weir

import "fmt"

// Generate adds a deterministic, replayable generator source: record i is
// gen(i), for i in [0, count) (or forever with Unbounded). It is read by
// splits: split s of N produces the indices s, s+N, s+2N, …, and its offset
// is how many it has produced. At the first run instance j of p serves split
// j of p; a restore at another parallelism hands the checkpoint's splits to
// the new instances (see SplitSource), an instance with several reads them
// in turn, a batch at a time, and one with none is done at once.
func Generate[T any](g *Graph, name string, count int64, gen func(i int64) T, opts ...OpOption) Stream[T] {
	return FromSplitSource(g, name, func(instance int) SplitSource[T] {
		return &generator[T]{count: count, gen: gen, instance: instance}
	}, opts...)
}

// generator is the source made by Generate.
type generator[T any] struct {
	count    int64
	gen      func(int64) T
	instance int
	splits   []Split // served in turn from next
	next     int
}

// Open gives the instance its first-run split, instance of parallelism.
func (s *generator[T]) Open(info TaskInfo) error {
	s.splits = []Split{{ID: s.instance, Of: info.Parallelism}}
	s.next = 0
	return nil
}

func (s *generator[T]) Close() error { return nil }

// Offset is how many records the instance's splits have produced in all.
func (s *generator[T]) Offset() int64 {
	var n int64
	for _, sp := range s.splits {
		n += sp.Offset
	}
	return n
}

// SeekTo moves the instance's one split to offset (a checkpoint from before
// splits were stored).
func (s *generator[T]) SeekTo(offset int64) error {
	if offset < 0 {
		return fmt.Errorf("generator: negative offset %d", offset)
	}
	if len(s.splits) != 1 {
		return fmt.Errorf("generator: seek to offset %d with %d splits", offset, len(s.splits))
	}
	s.splits[0].Offset = offset
	return nil
}

// Splits is the instance's splits and their offsets.
func (s *generator[T]) Splits() []Split { return append([]Split(nil), s.splits...) }

// AssignSplits makes the instance serve splits, from their offsets.
func (s *generator[T]) AssignSplits(splits []Split) error {
	for _, sp := range splits {
		if sp.Of < 1 || sp.ID < 0 || sp.ID >= sp.Of || sp.Offset < 0 {
			return fmt.Errorf("generator: split %d of %d at offset %d is not a split", sp.ID, sp.Of, sp.Offset)
		}
	}
	s.splits, s.next = append([]Split(nil), splits...), 0
	return nil
}

// index is the record index split sp produces next.
func (s *generator[T]) index(sp Split) int64 {
	return int64(sp.ID) + sp.Offset*int64(sp.Of)
}

// exhausted reports whether split sp has produced all its records.
func (s *generator[T]) exhausted(sp Split) bool {
	return s.count >= 0 && s.index(sp) >= s.count
}

// Read fills buf from the split whose turn it is, then from the next ones if
// that split runs out; the following call starts at the next split.
func (s *generator[T]) Read(buf []T) (int, bool, error) {
	n := 0
	for tried := 0; n < len(buf) && tried < len(s.splits); tried++ {
		sp := &s.splits[s.next]
		for n < len(buf) && !s.exhausted(*sp) {
			buf[n] = s.gen(s.index(*sp))
			n++
			sp.Offset++
		}
		s.next = (s.next + 1) % len(s.splits)
	}
	return n, s.done(), nil
}

// done reports whether every split has produced all its records (at once
// for an instance without splits).
func (s *generator[T]) done() bool {
	for _, sp := range s.splits {
		if !s.exhausted(sp) {
			return false
		}
	}
	return true
}
