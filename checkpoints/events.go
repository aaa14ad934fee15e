package checkpoints

import (
	"fmt"
	"time"

	"github.com/weirstream/weir/internal/task"
)

// Tick advances logical time. It aborts the checkpoint in flight if its
// acknowledgements are not all in after Timeout (a manifest being written is
// not timed out here: its writer reports success or failure), and triggers
// the next checkpoint once Interval has passed since the last one ended, or
// at once if a final checkpoint is wanted. While paused it triggers nothing.
func (c *Coordinator) Tick(now time.Duration) []Action {
	if c.done() {
		return nil
	}
	var acts []Action
	if c.inFlight && !c.writing && now-c.started >= c.cfg.Timeout {
		acts = c.abort(acts, fmt.Sprintf("timeout: not acknowledged by %d of %d tasks after %v",
			len(c.tasks)-len(c.acked), len(c.tasks), now-c.started), now)
	}
	if !c.inFlight && !c.paused && (c.lastWanted() || now >= c.nextAt) {
		acts = append(acts, c.trigger(now))
	}
	return acts
}

// OnAck records that task stored its part of checkpoint id. When every task
// has acknowledged it returns WriteManifest. Duplicate and stale
// acknowledgements are dropped; one from a task not in the job, or for an id
// never triggered, is reported as Ignored.
func (c *Coordinator) OnAck(id uint64, tk task.ID, now time.Duration) []Action {
	if act, ok := c.knownTask(id, tk, "ack"); !ok {
		return []Action{act}
	}
	if id > c.lastID {
		return []Action{Ignored{ID: id, Task: tk, Reason: "ack for a checkpoint never triggered"}}
	}
	if !c.collecting(id) {
		return nil // stale: aborted, completed or already writing
	}
	if _, dup := c.acked[tk]; dup {
		return nil
	}
	c.acked[tk] = struct{}{}
	if len(c.acked) < len(c.tasks) {
		return nil
	}
	c.writing = true
	return []Action{WriteManifest{ID: id}}
}

// OnDecline handles task failing to snapshot checkpoint id: the checkpoint is
// aborted, and the next one follows after Interval (at once if a final
// checkpoint is wanted). Declines for other ids are dropped.
func (c *Coordinator) OnDecline(id uint64, tk task.ID, reason string, now time.Duration) []Action {
	if act, ok := c.knownTask(id, tk, "decline"); !ok {
		return []Action{act}
	}
	if !c.collecting(id) {
		return nil
	}
	return c.abort(nil, fmt.Sprintf("declined by %v: %s", tk, reason), now)
}

// OnManifestWritten completes checkpoint id once its manifest is durable:
// Completed, Delete for checkpoints beyond the newest Retain, and FinalDone
// if it was the final checkpoint (or a Trigger of the final one, if that was
// requested meanwhile).
func (c *Coordinator) OnManifestWritten(id uint64, now time.Duration) []Action {
	if !c.inFlight || !c.writing || id != c.id {
		return nil
	}
	final, stop := c.final, c.stop
	acts := []Action{Completed{ID: id, Duration: now - c.started, Final: final, Stop: stop}}
	c.retained = append(c.retained, id)
	if n := len(c.retained) - c.cfg.Retain; n > 0 {
		old := append([]uint64(nil), c.retained[:n]...)
		c.retained = append(c.retained[:0], c.retained[n:]...)
		acts = append(acts, Delete{IDs: old})
	}
	switch {
	case final:
		c.finalDone, c.endID = true, id
		acts = append(acts, FinalDone{ID: id})
	case stop:
		c.stopDone, c.endID = true, id
		acts = append(acts, StopDone{ID: id})
	}
	return c.end(acts, now)
}

// OnManifestFailed aborts checkpoint id whose manifest could not be written.
func (c *Coordinator) OnManifestFailed(id uint64, err error, now time.Duration) []Action {
	if !c.inFlight || !c.writing || id != c.id {
		return nil
	}
	return c.abort(nil, fmt.Sprintf("write manifest: %v", err), now)
}

// RequestFinal asks for a last checkpoint at the end of input: triggered at
// once if none is in flight, else as soon as the one in flight ends, and
// retried until it completes. A requested stop checkpoint takes its place.
func (c *Coordinator) RequestFinal(now time.Duration) []Action {
	if c.finalRequested || c.stopRequested || c.done() {
		return nil
	}
	c.finalRequested = true
	if c.inFlight || c.paused {
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
	c.final = false
}

// RequestStop asks for a stop checkpoint: the job stops without draining its
// input and is to be restored from it, so it may be unaligned. A checkpoint
// still collecting acknowledgements is superseded (aborted) and the stop
// checkpoint triggered at once; one whose manifest is being written decides
// first, then the stop checkpoint follows. It is retried until it completes,
// and nothing is triggered after it. A stop replaces a requested final
// checkpoint; after the final or stop checkpoint completed it does nothing.
func (c *Coordinator) RequestStop(now time.Duration) []Action {
	if c.stopRequested || c.done() {
		return nil
	}
	c.stopRequested = true
	switch {
	case !c.inFlight && c.paused:
		return nil
	case !c.inFlight:
		return []Action{c.trigger(now)}
	case !c.writing:
		return c.abort(nil, "superseded by the stop checkpoint", now)
	}
	return nil
}

// Pause holds back every trigger (Tick, RequestFinal, RequestStop and the
// retry of a final or stop checkpoint when one ends) while a region is being
// restored: a barrier injected then would reach a source that is stopped or
// not yet wired, be lost, and leave the checkpoint to time out. A checkpoint
// in flight is not affected.
func (c *Coordinator) Pause() { c.paused = true }

// Resume ends Pause. A final or stop checkpoint that is wanted and not in
// flight is triggered at once; ordinary ones follow on Tick.
func (c *Coordinator) Resume(now time.Duration) []Action {
	if !c.paused {
		return nil
	}
	c.paused = false
	if c.inFlight || !c.lastWanted() {
		return nil
	}
	return []Action{c.trigger(now)}
}

// StopDone reports whether the stop checkpoint completed.
func (c *Coordinator) StopDone() bool { return c.stopDone }

// FinalDone reports whether the final checkpoint completed.
func (c *Coordinator) FinalDone() bool { return c.finalDone }

// Writing reports the checkpoint whose manifest is being written, if any: its
// outcome is decided by the write, not by failures or timeouts.
func (c *Coordinator) Writing() (uint64, bool) {
	if c.inFlight && c.writing {
		return c.id, true
	}
	return 0, false
}
