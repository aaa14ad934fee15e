package weir

import (
	"fmt"
	"time"

	"github.com/weirstream/weir/internal/plan"
)

// WatermarkOption configures how WithTimestamps makes watermarks.
type WatermarkOption struct{ apply func(*watermarkConfig) }

type watermarkConfig struct {
	outOfOrder time.Duration
	idleAfter  time.Duration
}

// BoundedOutOfOrderness lets records arrive up to d later than the latest
// event time seen: the watermark trails the highest timestamp by d.
func BoundedOutOfOrderness(d time.Duration) WatermarkOption {
	return WatermarkOption{func(c *watermarkConfig) { c.outOfOrder = d }}
}

// IdleAfter marks an instance idle when it has seen no record for d of
// processing time: its consumers leave it out of their watermark until it
// sees records again, so an empty partition does not hold event time back.
func IdleAfter(d time.Duration) WatermarkOption {
	return WatermarkOption{func(c *watermarkConfig) { c.idleAfter = d }}
}

// WithTimestamps assigns each record of s its event time ts(record) and
// generates watermarks: the highest timestamp an instance has seen, less the
// BoundedOutOfOrderness, less one nanosecond. It adds an operator named name
// with the parallelism of s, fed forward. A record at or before the
// watermark that reaches a window is late (see WindowedStream).
func WithTimestamps[T any](s Stream[T], name string, ts func(T) time.Time, opts ...WatermarkOption) Stream[T] {
	var cfg watermarkConfig
	for _, o := range opts {
		if o.apply != nil {
			o.apply(&cfg)
		}
	}
	if cfg.outOfOrder < 0 || cfg.idleAfter < 0 {
		s.g.errs = append(s.g.errs, fmt.Errorf("operator %q: out-of-orderness %v and idle timeout %v must not be negative", name, cfg.outOfOrder, cfg.idleAfter))
	}
	p := 1
	if s.up.from != nil {
		p = s.up.from.Parallelism
	}
	at := func(r T) int64 { return ts(r).UnixNano() }
	op, _ := s.g.addOperator(name, plan.KindTransform, []OpOption{Parallelism(p)}, s.Forward().up)
	op.New = func(int) (plan.Instance, error) {
		return &timestampAssigner[T]{name: name, at: at, cfg: cfg, max: plan.MinWatermark}, nil
	}
	out := newStream[T](s.g, op)
	out.eventTime = at
	return out
}

// Timestamped says how the records of s carry their event time, for a
// stream whose watermarks already flow from upstream (after a Map that
// changed the record type, for instance). It adds no operator.
func Timestamped[T any](s Stream[T], ts func(T) time.Time) Stream[T] {
	s.eventTime = func(r T) int64 { return ts(r).UnixNano() }
	return s
}

// timestampAssigner forwards records and makes the watermark from the
// highest timestamp it saw.
type timestampAssigner[T any] struct {
	name     string
	at       func(T) int64
	cfg      watermarkConfig
	max      int64
	lastSeen time.Time // processing time of the last record (idleness)
	em       Emitter[T]
}

func (a *timestampAssigner[T]) Open(plan.TaskInfo) error { a.lastSeen = time.Now(); return nil }
func (a *timestampAssigner[T]) Close() error             { return nil }
func (a *timestampAssigner[T]) Finish(plan.Output) error { return nil }

// Process forwards the batch and notes its highest timestamp.
func (a *timestampAssigner[T]) Process(_ int, b plan.Batch, out plan.Output) error {
	recs, ok := plan.RecordsOf[T](b)
	if !ok {
		return fmt.Errorf("operator %q: got a batch of %T, want %T records", a.name, b, *new(T))
	}
	if len(recs) == 0 {
		return nil
	}
	a.em.bind(out)
	for _, r := range recs {
		a.max = max(a.max, a.at(r))
		a.em.Emit(r)
	}
	a.lastSeen = time.Now()
	return nil
}

// Watermark is the highest timestamp less the bound, or idle after the idle
// timeout without records.
func (a *timestampAssigner[T]) Watermark(now time.Time) (int64, bool) {
	if a.cfg.idleAfter > 0 && now.Sub(a.lastSeen) >= a.cfg.idleAfter {
		return 0, true
	}
	if a.max == plan.MinWatermark {
		return plan.MinWatermark, false
	}
	return a.max - int64(a.cfg.outOfOrder) - 1, false
}
