package weir

import "time"

// Sleeper makes an operator slow by an average amount per record, accurately
// even for averages far below what time.Sleep can resolve (e.g. 10 µs): it
// accumulates the debt and sleeps once it reaches a millisecond.
// A Sleeper is used by one task at a time; make one per operator instance or
// use NewSleeper inside the operator's closure per instance.
type Sleeper struct {
	per   time.Duration
	debt  time.Duration
	start time.Time
}

// sleepQuantum is the smallest debt worth a time.Sleep.
const sleepQuantum = time.Millisecond

// NewSleeper returns a Sleeper that averages per for each Tick; per ≤ 0 never sleeps.
func NewSleeper(per time.Duration) *Sleeper { return &Sleeper{per: per} }

// Tick accounts for one record and sleeps when the debt is due. The real time
// slept is measured, so oversleeping is paid back by later records.
func (s *Sleeper) Tick() {
	if s.per <= 0 {
		return
	}
	s.debt += s.per
	if s.debt < sleepQuantum {
		return
	}
	t0 := time.Now()
	time.Sleep(s.debt)
	s.debt -= time.Since(t0)
}

// NewSleepers returns a Sleeper averaging per for every instance an operator
// can have (DefaultMaxParallelism), indexed by instance: instances run
// concurrently, and a run may give the operator more instances than the
// graph did (WithOperatorParallelism).
func NewSleepers(per time.Duration) []*Sleeper {
	s := make([]*Sleeper, DefaultMaxParallelism)
	for i := range s {
		s[i] = NewSleeper(per)
	}
	return s
}
