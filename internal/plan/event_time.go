package plan

import (
	"math"
	"time"
)

// Event time is carried as int64 Unix nanoseconds. A watermark w says that no
// more records with a timestamp at or before w are expected.
const (
	// MinWatermark is the watermark before any was seen.
	MinWatermark int64 = math.MinInt64
	// MaxWatermark is the watermark at the end of input: every event-time
	// timer fires.
	MaxWatermark int64 = math.MaxInt64
)

// EventTimeOperator is a transform instance that takes part in event time.
// Instances that do not implement it forward their input watermark as it is.
type EventTimeOperator interface {
	// OnWatermark is called when the task's input watermark advances to wm
	// (MaxWatermark at the end of input). It may emit records (fired
	// timers) and returns the watermark the task forwards downstream.
	OnWatermark(wm int64, out Output) (int64, error)
}

// WatermarkGenerator is an instance that makes its own watermarks from the
// records it sees (a timestamp assigner) instead of forwarding its input's.
type WatermarkGenerator interface {
	// Watermark is the instance's current watermark at processing time now,
	// and whether it is idle (no records for its idle timeout): an idle
	// output is left out of its consumers' minimum.
	Watermark(now time.Time) (wm int64, idle bool)
}

// ProcessingTimeOperator is an instance with processing-time timers; the
// task calls it on every tick of the job's flush interval.
type ProcessingTimeOperator interface {
	// OnProcessingTime fires the timers due at now.
	OnProcessingTime(now time.Time, out Output) error
}
