package supervision

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// ErrInvalidConfig is returned for an intensity or supervisor configuration
// that cannot be run.
var ErrInvalidConfig = errors.New("supervision: invalid config")

// Intensity is an OTP restart intensity with a backoff: at most MaxRestarts
// restarts within any Window, else the failure escalates to the parent.
type Intensity struct {
	// MaxRestarts is how many restarts a Window may hold; 0 means the first
	// failure escalates.
	MaxRestarts int
	// Window is the period over which restarts are counted (OTP's period); a
	// restart exactly Window before a failure still counts.
	Window time.Duration
	// Backoff is the delay before each restart.
	Backoff Backoff
}

// Backoff is the delay before the n-th consecutive restart:
// min(Max, Initial·Multiplier^(n-1)). Initial 0 means restart at once (Max
// and Multiplier are then unused and may be zero).
type Backoff struct {
	Initial, Max time.Duration
	Multiplier   float64
}

// Validate reports a configuration the Tracker cannot run, wrapping
// ErrInvalidConfig.
func (i Intensity) Validate() error {
	switch {
	case i.MaxRestarts < 0:
		return fmt.Errorf("max restarts %d is negative: %w", i.MaxRestarts, ErrInvalidConfig)
	case i.Window < 0:
		return fmt.Errorf("window %v is negative: %w", i.Window, ErrInvalidConfig)
	case i.MaxRestarts > 0 && i.Window == 0:
		return fmt.Errorf("window must be > 0 with %d max restarts: %w", i.MaxRestarts, ErrInvalidConfig)
	}
	if err := i.Backoff.validate(); err != nil {
		return fmt.Errorf("backoff: %w", err)
	}
	return nil
}

func (b Backoff) validate() error {
	switch {
	case b.Initial < 0:
		return fmt.Errorf("initial %v is negative: %w", b.Initial, ErrInvalidConfig)
	case b.Initial == 0:
		if b.Max < 0 || b.Multiplier < 0 || math.IsNaN(b.Multiplier) {
			return fmt.Errorf("max %v, multiplier %v: %w", b.Max, b.Multiplier, ErrInvalidConfig)
		}
		return nil
	case !(b.Multiplier >= 1) || math.IsInf(b.Multiplier, 0):
		return fmt.Errorf("multiplier %v, need a finite value >= 1: %w", b.Multiplier, ErrInvalidConfig)
	case b.Max < b.Initial:
		return fmt.Errorf("max %v is below initial %v: %w", b.Max, b.Initial, ErrInvalidConfig)
	}
	return nil
}

// Delay returns the delay before the n-th consecutive restart (n >= 1).
func (b Backoff) Delay(n int) time.Duration {
	if b.Initial <= 0 {
		return 0
	}
	f := float64(b.Initial) * math.Pow(b.Multiplier, float64(max(n, 1)-1))
	if math.IsNaN(f) || f >= float64(b.Max) {
		return b.Max
	}
	return time.Duration(f)
}

// Decision is a Tracker's answer to one failure: restart after Delay, or
// escalate to the parent.
type Decision struct {
	Restart  bool
	Delay    time.Duration
	Escalate bool
	// RestartsInWindow counts the restarts within the window ending now,
	// this one included when Restart.
	RestartsInWindow int
	// Attempt is n in the backoff formula: the n-th consecutive restart
	// since the subtree last ran stably (0 when escalating).
	Attempt int
}

// String renders the decision for logs and scripted tests.
func (d Decision) String() string {
	if d.Escalate {
		return fmt.Sprintf("escalate in-window=%d", d.RestartsInWindow)
	}
	return fmt.Sprintf("restart delay=%v attempt=%d in-window=%d", d.Delay, d.Attempt, d.RestartsInWindow)
}

// Tracker applies an Intensity to the failures of one subtree on logical
// time. It is not safe for concurrent use.
type Tracker struct {
	cfg         Intensity
	restarts    []time.Duration // times of the restarts still in the window, oldest first
	consecutive int             // restarts since the subtree last ran stably for Window
	stableFrom  time.Duration   // first OnStable since the last failure
	stableKnown bool
	now         time.Duration // latest time seen; earlier times are clamped to it
}

// NewTracker returns a Tracker for i, or an error wrapping ErrInvalidConfig.
func NewTracker(i Intensity) (*Tracker, error) {
	if err := i.Validate(); err != nil {
		return nil, fmt.Errorf("new restart tracker: %w", err)
	}
	return &Tracker{cfg: i, restarts: make([]time.Duration, 0, min(i.MaxRestarts, 64))}, nil
}

// OnFailure records a failure at logical time now and decides. When more
// than MaxRestarts restarts would fall within the Window ending now it
// escalates and records nothing (the restart does not happen); otherwise it
// records the restart and returns the backoff delay, which grows with each
// consecutive restart until OnStable resets it.
func (t *Tracker) OnFailure(now time.Duration) Decision {
	now = t.advance(now)
	t.stableKnown = false
	// OTP keeps restarts at or after now - Window.
	keep := 0
	for keep < len(t.restarts) && now-t.restarts[keep] > t.cfg.Window {
		keep++
	}
	t.restarts = append(t.restarts[:0], t.restarts[keep:]...)
	if len(t.restarts)+1 > t.cfg.MaxRestarts {
		return Decision{Escalate: true, RestartsInWindow: len(t.restarts)}
	}
	t.restarts = append(t.restarts, now)
	t.consecutive++
	return Decision{
		Restart:          true,
		Delay:            t.cfg.Backoff.Delay(t.consecutive),
		RestartsInWindow: len(t.restarts),
		Attempt:          t.consecutive,
	}
}

// OnStable tells the tracker the subtree has run without failure until now.
// The first call after a failure starts the stable period (call it when the
// subtree runs again, then periodically); once the subtree has been stable
// for at least Window, the next restart's backoff starts from Initial again.
// Restarts in the window expire by time alone.
func (t *Tracker) OnStable(now time.Duration) {
	now = t.advance(now)
	if !t.stableKnown {
		t.stableKnown, t.stableFrom = true, now
	}
	if now-t.stableFrom >= t.cfg.Window {
		t.consecutive = 0
	}
}

// OnProgress tells the tracker the subtree made durable progress since its
// last restart (a checkpoint completed): it is healthy, so the next
// restart's backoff starts from Initial again. Restarts in the window still
// count towards the intensity.
func (t *Tracker) OnProgress() { t.consecutive = 0 }

// advance clamps now so that logical time never goes back.
func (t *Tracker) advance(now time.Duration) time.Duration {
	if now < t.now {
		return t.now
	}
	t.now = now
	return now
}
