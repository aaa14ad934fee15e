package supervision

import (
	"errors"
	"math"
	"testing"
	"time"
)

func TestBackoffDelay(t *testing.T) {
	b := Backoff{Initial: 100 * time.Millisecond, Max: time.Minute, Multiplier: 1.5}
	tests := []struct {
		n    int
		want time.Duration
	}{
		{0, 100 * time.Millisecond}, // n < 1 is the first restart
		{1, 100 * time.Millisecond},
		{2, 150 * time.Millisecond},
		{3, 225 * time.Millisecond},
		{12, time.Duration(100 * float64(time.Millisecond) * math.Pow(1.5, 11))},
		{20, time.Minute},
		{1 << 30, time.Minute}, // no overflow
	}
	for _, tt := range tests {
		if got := b.Delay(tt.n); got != tt.want {
			t.Errorf("Delay(%d) = %v, want %v", tt.n, got, tt.want)
		}
	}
	if got := (Backoff{}).Delay(5); got != 0 {
		t.Errorf("zero Backoff Delay = %v, want 0", got)
	}
	flat := Backoff{Initial: time.Second, Max: time.Second, Multiplier: 1}
	if got := flat.Delay(100); got != time.Second {
		t.Errorf("flat Delay = %v", got)
	}
}

func TestIntensityValidate(t *testing.T) {
	good := []Intensity{
		{},
		{MaxRestarts: 0, Window: time.Second},
		{MaxRestarts: 3, Window: time.Minute},
		{MaxRestarts: 3, Window: time.Minute, Backoff: Backoff{Initial: time.Second, Max: time.Second, Multiplier: 1}},
	}
	for _, i := range good {
		if err := i.Validate(); err != nil {
			t.Errorf("%+v: %v", i, err)
		}
	}
	bad := []Intensity{
		{MaxRestarts: -1, Window: time.Second},
		{MaxRestarts: 1},
		{MaxRestarts: 1, Window: -time.Second},
		{MaxRestarts: 1, Window: time.Second, Backoff: Backoff{Initial: time.Second, Max: time.Minute, Multiplier: 0.9}},
		{MaxRestarts: 1, Window: time.Second, Backoff: Backoff{Initial: time.Second, Max: time.Minute, Multiplier: math.NaN()}},
		{MaxRestarts: 1, Window: time.Second, Backoff: Backoff{Initial: time.Second, Max: time.Minute, Multiplier: math.Inf(1)}},
		{MaxRestarts: 1, Window: time.Second, Backoff: Backoff{Initial: time.Second, Multiplier: 2}},
		{MaxRestarts: 1, Window: time.Second, Backoff: Backoff{Initial: -1}},
		{MaxRestarts: 1, Window: time.Second, Backoff: Backoff{Max: -1}},
	}
	for _, i := range bad {
		err := i.Validate()
		if !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%+v: %v, want ErrInvalidConfig", i, err)
		}
		if _, err := NewTracker(i); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("NewTracker(%+v): %v, want ErrInvalidConfig", i, err)
		}
	}
}

// TestTrackerSlidingWindow checks, for many failure times, that a restart is
// allowed exactly when fewer than MaxRestarts earlier restarts lie within
// [now-Window, now], against a direct count.
func TestTrackerSlidingWindow(t *testing.T) {
	const maxR, window = 3, 10 * time.Second
	tr, err := NewTracker(Intensity{MaxRestarts: maxR, Window: window})
	if err != nil {
		t.Fatal(err)
	}
	var restarts []time.Duration
	var now time.Duration
	escalations := 0
	for i := range 200 {
		now += time.Duration(i*i%13) * time.Second / 2 // irregular steps, some zero
		inWindow := 0
		for _, r := range restarts {
			if now-r <= window {
				inWindow++
			}
		}
		d := tr.OnFailure(now)
		wantRestart := inWindow < maxR
		if d.Restart != wantRestart || d.Escalate == wantRestart {
			t.Fatalf("failure %d at %v with %d in window: %v", i, now, inWindow, d)
		}
		if wantRestart {
			restarts = append(restarts, now)
			inWindow++
		} else {
			escalations++
		}
		if d.RestartsInWindow != inWindow {
			t.Fatalf("failure %d at %v: RestartsInWindow %d, want %d", i, now, d.RestartsInWindow, inWindow)
		}
	}
	if escalations == 0 || len(restarts) < 2*maxR {
		t.Fatalf("sequence too tame: %d restarts, %d escalations", len(restarts), escalations)
	}
}

func BenchmarkTrackerOnFailure(b *testing.B) {
	tr, err := NewTracker(Intensity{MaxRestarts: 10, Window: time.Second,
		Backoff: Backoff{Initial: time.Millisecond, Max: time.Second, Multiplier: 2}})
	if err != nil {
		b.Fatal(err)
	}
	var now time.Duration
	for b.Loop() {
		now += 50 * time.Millisecond
		tr.OnFailure(now)
	}
}
