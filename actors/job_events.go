package actors

import (
	"fmt"
	"sync"
	"time"

	"github.com/weirstream/weir/store"
)

// maxJobEvents bounds the events a job remembers.
const maxJobEvents = 256

// Job event kinds.
const (
	EventFailure = "failure" // a task failed; Detail is the cause
	EventKill    = "kill"    // chaos killed a task
	EventRestart = "restart" // a failover region runs again after a restore
	EventRestore = "restore" // a task restored its state; Detail says from where
	EventRescale = "rescale" // an operator's parallelism changed while running
)

// JobEvent is one thing that happened to a job, for its timeline.
type JobEvent struct {
	At     time.Time `json:"at"`
	Kind   string    `json:"kind"`
	Task   string    `json:"task,omitempty"`
	Detail string    `json:"detail,omitempty"`
}

// eventLog keeps a job's most recent events; safe for any goroutine.
type eventLog struct {
	mu     sync.Mutex
	events []JobEvent
}

// note records an event, stamped now under the lock, so that the log
// stays in time order however its writers interleave: a writer that read
// the clock before waiting for the lock appended after a later event (seen
// in the web API's timeline on a loaded machine).
func (l *eventLog) note(kind, task, detail string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e := JobEvent{At: time.Now(), Kind: kind, Task: task, Detail: detail}
	if len(l.events) == maxJobEvents {
		l.events = append(l.events[:0], l.events[1:]...)
	}
	l.events = append(l.events, e)
}

// noteEvent records an event now.
func (j *Job) noteEvent(kind, task, detail string) {
	j.events.note(kind, task, detail)
}

// Events returns the job's most recent events on this node (at most
// maxJobEvents), oldest first.
func (j *Job) Events() []JobEvent {
	j.events.mu.Lock()
	defer j.events.mu.Unlock()
	return append([]JobEvent(nil), j.events.events...)
}

// restoreDetail says where a task's restored state came from.
func restoreDetail(checkpoint uint64, read store.ReadStats) string {
	return fmt.Sprintf("checkpoint %d: %d bytes local, %d bytes remote", checkpoint, read.LocalBytes, read.RemoteBytes)
}
