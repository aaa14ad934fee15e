package actors

import (
	"testing"
	"time"
)

func TestStallDetectorReportsAfterQuietPeriodAndRepeats(t *testing.T) {
	const after = 30 * time.Second
	a, b := progressMark{in: 1}, progressMark{in: 2}
	steps := []struct {
		at      time.Duration
		mark    progressMark
		report  bool
		stalled time.Duration
	}{
		{at: 10 * time.Second, mark: a, stalled: 10 * time.Second},
		{at: 29 * time.Second, mark: a, stalled: 29 * time.Second},
		{at: 30 * time.Second, mark: a, report: true, stalled: 30 * time.Second},
		{at: 45 * time.Second, mark: a, stalled: 45 * time.Second}, // reported 15 s ago
		{at: 60 * time.Second, mark: a, report: true, stalled: 60 * time.Second},
		{at: 61 * time.Second, mark: b}, // progress: starts over
		{at: 90 * time.Second, mark: b, stalled: 29 * time.Second},
		{at: 91 * time.Second, mark: b, report: true, stalled: 30 * time.Second},
		{at: 92 * time.Second, mark: progressMark{in: 2, checkpoints: 1}}, // a checkpoint is progress
		{at: 100 * time.Second, mark: progressMark{in: 2, checkpoints: 1}, stalled: 8 * time.Second},
	}
	d := newStallDetector(after, a, 0)
	for _, s := range steps {
		report, stalled := d.observe(s.mark, s.at)
		if report != s.report || stalled != s.stalled {
			t.Fatalf("at %v: report %v after %v, want %v after %v", s.at, report, stalled, s.report, s.stalled)
		}
	}
}
