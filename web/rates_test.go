package web

import (
	"math"
	"testing"
	"time"
)

func TestRateFromCounterDeltas(t *testing.T) {
	t0 := time.Unix(1000, 0)
	steps := []struct {
		name  string
		value int64
		after time.Duration
		want  float64
	}{
		{"first sample has no rate", 500, 0, 0},
		{"1000 more in 2s", 1500, 2 * time.Second, 500},
		{"too soon: the last rate again", 1700, 100 * time.Millisecond, 500},
		{"unchanged counter over the interval", 1500, 2 * time.Second, 0},
		{"then it moves", 1700, time.Second, 200},
		{"counter started again after a restart", 300, time.Second, 300},
		{"half a second", 400, 500 * time.Millisecond, 200},
	}
	r := NewRates()
	at := t0
	for _, s := range steps {
		at = at.Add(s.after)
		if got := r.Rate("task", s.value, at); math.Abs(got-s.want) > 1e-9 {
			t.Fatalf("%s: rate %v, want %v", s.name, got, s.want)
		}
	}
	if got := r.Rate("other", 10, at); got != 0 {
		t.Fatalf("a new counter's first rate is %v, want 0", got)
	}
}

func TestBackpressureIsTheShareOfBlockedPolls(t *testing.T) {
	r := NewRates()
	if got := r.Backpressure("t", true); got != 1 {
		t.Fatalf("one blocked poll: %v, want 1", got)
	}
	if got := r.Backpressure("t", false); got != 0.5 {
		t.Fatalf("one of two: %v, want 0.5", got)
	}
	for range backpressureWindow {
		r.Backpressure("t", false)
	}
	if got := r.Backpressure("t", true); got != 1.0/backpressureWindow {
		t.Fatalf("one of a full window: %v, want %v", got, 1.0/backpressureWindow)
	}
	r.Forget(map[string]bool{})
	if got := r.Backpressure("t", false); got != 0 {
		t.Fatalf("after Forget the window starts again: %v, want 0", got)
	}
}
