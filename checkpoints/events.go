package checkpoints

import (
	"fmt"
	"slices"
	"time"

	"github.com/weirstream/weir/internal/task"
)

// Tick advances logical time. It aborts every checkpoint in flight whose
// acknowledgements are not all in after Timeout (one whose acknowledgements
// are all in waits only for older ones and is not timed out; a manifest being
// written is decided by its writer), and triggers the next checkpoint once
// Interval has passed since the later of the last trigger and the last end,
// if fewer than MaxConcurrent are in flight. A final or stop checkpoint that
// is wanted is triggered at once when none is in flight, and holds back
// ordinary ones. While paused it triggers nothing.
func (c *Coordinator) Tick(now time.Duration) []Action {
	if c.done() {
		return nil
	}
	var acts []Action
	for _, f := range slices.Clone(c.flights) {
		if f.collecting() && now-f.started >= c.cfg.Timeout {
			acts = c.abort(acts, f, fmt.Sprintf("timeout: not acknowledged by %d of %d tasks after %v",
				len(c.tasks)-len(f.acked), len(c.tasks), now-f.started), now)
		}
	}
	if c.paused || c.done() {
		return acts
	}
	switch {
	case c.lastWanted():
		if len(c.flights) == 0 {
			acts = append(acts, c.trigger(now))
		}
	case !c.held && len(c.flights) < c.cfg.MaxConcurrent && now >= c.nextAt:
		acts = append(acts, c.trigger(now))
	}
	return acts
}

// OnAck records that task stored its part of checkpoint id. When every task
// has acknowledged it and every older checkpoint has ended it returns
// WriteManifest; a checkpoint acknowledged before an older one ended waits
// for it (its manifest is written when the older one completes or aborts),
// so checkpoints complete in the order of their ids. Duplicate and stale
// acknowledgements are dropped; one from a task not in the job, or for an id
// never triggered, is reported as Ignored.
func (c *Coordinator) OnAck(id uint64, tk task.ID, now time.Duration) []Action {
	if act, ok := c.knownTask(id, tk, "ack"); !ok {
		return []Action{act}
	}
	if id > c.lastID {
		return []Action{Ignored{ID: id, Task: tk, Reason: "ack for a checkpoint never triggered"}}
	}
	f, ok := c.collecting(id)
	if !ok {
		return nil // stale: aborted, completed or already acknowledged by all
	}
	if _, dup := f.acked[tk]; dup {
		return nil
	}
	f.acked[tk] = struct{}{}
	if len(f.acked) < len(c.tasks) {
		return nil
	}
	f.allAcked = true
	return c.writeNext(nil)
}

// OnDecline handles task failing to snapshot checkpoint id: that checkpoint
// is aborted (older and newer ones in flight go on), and the next one
// follows after Interval (at once if a final checkpoint is wanted and none
// is in flight). Declines of a checkpoint not collecting acknowledgements
// are dropped.
func (c *Coordinator) OnDecline(id uint64, tk task.ID, reason string, now time.Duration) []Action {
	if act, ok := c.knownTask(id, tk, "decline"); !ok {
		return []Action{act}
	}
	f, ok := c.collecting(id)
	if !ok {
		return nil
	}
	return c.abort(nil, f, fmt.Sprintf("declined by %v: %s", tk, reason), now)
}

// OnManifestWritten completes checkpoint id once its manifest is durable:
// Completed, Delete for checkpoints beyond the newest Retain, and FinalDone
// if it was the final checkpoint (or a Trigger of the final one, if that was
// requested meanwhile), then WriteManifest of the next checkpoint if it is
// already acknowledged by every task.
func (c *Coordinator) OnManifestWritten(id uint64, now time.Duration) []Action {
	f, ok := c.writingFlight(id)
	if !ok {
		return nil
	}
	acts := []Action{Completed{ID: id, Duration: now - f.started, Final: f.final, Stop: f.stop}}
	c.retained = append(c.retained, id)
	if n := len(c.retained) - c.cfg.Retain; n > 0 {
		old := append([]uint64(nil), c.retained[:n]...)
		c.retained = append(c.retained[:0], c.retained[n:]...)
		acts = append(acts, Delete{IDs: old})
	}
	switch {
	case f.final:
		c.finalDone, c.endID = true, id
		acts = append(acts, FinalDone{ID: id})
	case f.stop:
		c.stopDone, c.endID = true, id
		acts = append(acts, StopDone{ID: id})
	}
	return c.end(acts, f, now)
}

// writingFlight returns checkpoint id if its manifest is being written.
func (c *Coordinator) writingFlight(id uint64) (*flight, bool) {
	f, ok := c.flight(id)
	if !ok || !f.writing {
		return nil, false
	}
	return f, true
}

// OnManifestFailed aborts checkpoint id whose manifest could not be written;
// the next one in flight, if acknowledged by every task, is written next.
func (c *Coordinator) OnManifestFailed(id uint64, err error, now time.Duration) []Action {
	f, ok := c.writingFlight(id)
	if !ok {
		return nil
	}
	return c.abort(nil, f, fmt.Sprintf("write manifest: %v", err), now)
}

// RequestFinal asks for a last checkpoint at the end of input: triggered at
// once if none is in flight, else as soon as every one in flight ended, and
// retried until it completes. A requested stop checkpoint takes its place.
func (c *Coordinator) RequestFinal(now time.Duration) []Action {
	if c.finalRequested || c.stopRequested || c.done() {
		return nil
	}
	c.finalRequested = true
	if len(c.flights) > 0 || c.paused {
		return nil
	}
	return []Action{c.trigger(now)}
}

// CancelFinal withdraws a request for the final checkpoint: sources that were
// restarted after a failure have input to read again. A final checkpoint in
// flight becomes an ordinary one. After the final checkpoint completed it does
// nothing.
func (c *Coordinator) CancelFinal() {
	if c.finalDone {
		return
	}
	c.finalRequested = false
	for _, f := range c.flights {
		f.final = false
	}
}

// RequestStop asks for a stop checkpoint: the job stops without draining its
// input and is to be restored from it, so it may be unaligned. Checkpoints
// still collecting acknowledgements are superseded (aborted); once none is in
// flight (those acknowledged by every task decide first) the stop checkpoint
// is triggered. It is retried until it completes, and nothing is triggered
// after it. A stop replaces a requested final checkpoint; after the final or
// stop checkpoint completed it does nothing.
func (c *Coordinator) RequestStop(now time.Duration) []Action {
	if c.stopRequested || c.done() {
		return nil
	}
	c.stopRequested = true
	if len(c.flights) == 0 {
		if c.paused {
			return nil
		}
		return []Action{c.trigger(now)}
	}
	var acts []Action
	for _, f := range slices.Clone(c.flights) {
		if f.collecting() {
			acts = c.abort(acts, f, "superseded by the stop checkpoint", now)
		}
	}
	return acts
}

// Pause holds back every trigger (Tick, RequestFinal, RequestStop and the
// retry of a final or stop checkpoint when one ends) while a region is being
// restored: a barrier injected then would reach a source that is stopped or
// not yet wired, be lost, and leave the checkpoint to time out. Checkpoints
// in flight are not affected.
func (c *Coordinator) Pause() { c.paused = true }

// Resume ends Pause. A final or stop checkpoint that is wanted, with none in
// flight, is triggered at once; ordinary ones follow on Tick.
func (c *Coordinator) Resume(now time.Duration) []Action {
	if !c.paused {
		return nil
	}
	c.paused = false
	if len(c.flights) > 0 || !c.lastWanted() {
		return nil
	}
	return []Action{c.trigger(now)}
}

// Hold holds back the periodic checkpoints (on true) or lets them go on
// (false): while held, Tick triggers no ordinary checkpoint. Checkpoints in
// flight go on, and a final or stop checkpoint is not held back: a job that
// ends still takes it. A held job's next checkpoint is triggered by the
// first Tick after the hold ends, once its interval since the last trigger
// or end has passed.
func (c *Coordinator) Hold(on bool) { c.held = on }

// StopDone reports whether the stop checkpoint completed.
func (c *Coordinator) StopDone() bool { return c.stopDone }

// FinalDone reports whether the final checkpoint completed.
func (c *Coordinator) FinalDone() bool { return c.finalDone }

// Writing reports the checkpoint whose manifest is being written, if any: its
// outcome is decided by the write, not by failures or timeouts.
func (c *Coordinator) Writing() (uint64, bool) {
	if len(c.flights) > 0 && c.flights[0].writing {
		return c.flights[0].id, true
	}
	return 0, false
}

// Collecting returns the checkpoints in flight still waiting for
// acknowledgements, oldest first: those a failed task can no longer
// acknowledge.
func (c *Coordinator) Collecting() []uint64 {
	var ids []uint64
	for _, f := range c.flights {
		if f.collecting() {
			ids = append(ids, f.id)
		}
	}
	return ids
}
