package actors

import (
	"context"
	"runtime"
	"sync"
)

// transferSlots bounds how many encodings and decodings of key groups that a
// live rescale moves run at once. They run on the job's uploader, which has
// as many workers as a small machine has cores: two old owners handing off at
// the same moment (every old instance does, in a rescale 2 → 3) took every
// core with their encoding, and the tasks, the groups that stay among them,
// ran only when the Go scheduler preempted the encoders, every 10 ms. The
// stream's throughput at its sinks fell below half for as long as the
// encodings took. With at most GOMAXPROCS − 1 at once (at least one) a core
// stays for the tasks; the others queue, in order, and start as slots free.
type transferSlots struct {
	once    sync.Once
	mu      sync.Mutex
	free    int
	waiting []func(context.Context)
	// running counts the transfers started and not ended.
	running int
}

// transferSlotsFor is the number of transfers that run at once with
// procs Go processors.
func transferSlotsFor(procs int) int { return max(1, procs-1) }

// init sets the slots from GOMAXPROCS at first use.
func (s *transferSlots) init() {
	s.once.Do(func() { s.free = transferSlotsFor(runtime.GOMAXPROCS(0)) })
}

// submit has up run fn once a slot is free: now if one is, else after the
// transfers queued before it. It returns up's refusal when fn would start
// now and up refuses it (the caller then does the work itself); a queued fn
// that up refuses later runs on the goroutine that freed its slot.
func (s *transferSlots) submit(up *uploader, fn func(context.Context)) error {
	s.init()
	s.mu.Lock()
	if s.free == 0 {
		s.waiting = append(s.waiting, fn)
		s.mu.Unlock()
		return nil
	}
	s.free--
	s.running++
	s.mu.Unlock()
	if err := up.submit(s.wrap(up, fn)); err != nil {
		s.mu.Lock()
		s.free++
		s.running--
		s.mu.Unlock()
		return err
	}
	return nil
}

// wrap is fn that, once done, hands its slot to the next waiting transfer.
func (s *transferSlots) wrap(up *uploader, fn func(context.Context)) func(context.Context) {
	return func(ctx context.Context) {
		fn(ctx)
		s.mu.Lock()
		s.running--
		if len(s.waiting) == 0 {
			s.free++
			s.mu.Unlock()
			return
		}
		next := s.waiting[0]
		s.waiting[0] = nil
		s.waiting = s.waiting[1:]
		s.running++
		s.mu.Unlock()
		if err := up.submit(s.wrap(up, next)); err != nil {
			s.wrap(up, next)(ctx) // the uploader is full or stopping: here, in order
		}
	}
}

// counts reports the transfers running and those waiting for a slot.
func (s *transferSlots) counts() (running, waiting int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.running, len(s.waiting)
}
