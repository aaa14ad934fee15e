package weir

import (
	"fmt"
	"time"
)

// windowKind tells the window shapes apart.
type windowKind uint8

const (
	tumblingWindows windowKind = iota + 1
	slidingWindows
	sessionWindows
)

// WindowSpec is how a keyed stream is cut into windows: Tumbling, Sliding or
// Session, in event time unless made InProcessingTime.
type WindowSpec struct {
	kind           windowKind
	size, slide    int64 // nanoseconds (tumbling: slide = size)
	gap            int64 // sessions: nanoseconds without records that close one
	processingTime bool
}

// Tumbling cuts time into adjacent windows of length size, aligned to the
// Unix epoch: [0, size), [size, 2·size), …
func Tumbling(size time.Duration) WindowSpec {
	return WindowSpec{kind: tumblingWindows, size: int64(size), slide: int64(size)}
}

// Sliding makes windows of length size starting every slide (aligned to the
// Unix epoch); a record belongs to every window that covers it.
func Sliding(size, slide time.Duration) WindowSpec {
	return WindowSpec{kind: slidingWindows, size: int64(size), slide: int64(slide)}
}

// Session groups a key's records into sessions: a session ends once gap
// passes without a record of its key; sessions that come to overlap merge.
func Session(gap time.Duration) WindowSpec {
	return WindowSpec{kind: sessionWindows, gap: int64(gap)}
}

// InProcessingTime makes the windows follow the wall clock at the operator
// instead of the records' event time.
func (s WindowSpec) InProcessingTime() WindowSpec {
	s.processingTime = true
	return s
}

// validate names what is wrong with the spec.
func (s WindowSpec) validate() error {
	switch s.kind {
	case tumblingWindows, slidingWindows:
		if s.size <= 0 || s.slide <= 0 {
			return fmt.Errorf("window size %v and slide %v must be positive", time.Duration(s.size), time.Duration(s.slide))
		}
	case sessionWindows:
		if s.gap <= 0 {
			return fmt.Errorf("session gap %v must be positive", time.Duration(s.gap))
		}
	default:
		return fmt.Errorf("no window spec: use weir.Tumbling, weir.Sliding or weir.Session")
	}
	return nil
}

// window is the time range [start, end) in Unix nanoseconds.
type window struct{ start, end int64 }

// maxTimestamp is the last instant in the window: its timer fires when the
// watermark reaches it.
func (w window) maxTimestamp() int64 { return w.end - 1 }

// assign appends to dst the windows a record at ts belongs to, earliest
// first (sessions: the record's own window [ts, ts+gap), to be merged).
func (s WindowSpec) assign(dst []window, ts int64) []window {
	if s.kind == sessionWindows {
		return append(dst, window{ts, ts + s.gap})
	}
	last := ts - floorMod(ts, s.slide)
	first := last
	for first-s.slide > ts-s.size {
		first -= s.slide
	}
	for start := first; start <= last; start += s.slide {
		if start+s.size > ts { // a slide longer than the size leaves gaps
			dst = append(dst, window{start, start + s.size})
		}
	}
	return dst
}

// floorMod is x mod m in [0, m), for negative x too.
func floorMod(x, m int64) int64 {
	r := x % m
	if r < 0 {
		r += m
	}
	return r
}
