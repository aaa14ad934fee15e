package actors

import "fmt"

// taskPhase is where a task is in its life, as two stages moved only by
// on: its setup (its outputs wired and its start received, in either order:
// the start travels in the priority lane) and its work (reading, a source
// idle until the final checkpoint, a source told to end, the operator
// finishing, finished, or the actor stopping).
type taskPhase struct {
	setup setupStage
	work  workStage
}

// setupStage is how far a task's setup went.
type setupStage uint8

const (
	setupCreated      setupStage = iota // instance open, input channels spawned
	setupWired                          // outputs wired, not started
	setupStartedEarly                   // started before its wiring arrived
	setupRunning                        // wired and started
)

// workStage is where a task's work is.
type workStage uint8

const (
	workReading   workStage = iota // taking input (once running)
	workIdle                       // a source that read everything or took the stop checkpoint: waits for the final checkpoint
	workEnding                     // a source told to end its outputs
	workFinishing                  // the operator finished; its outputs are ending
	workFinished                   // every output ended; the job was told
	workStopping                   // the actor is stopping
)

// taskEvent moves a task's phase.
type taskEvent uint8

const (
	evWire      taskEvent = iota // its outputs were wired
	evStart                      // the job started it
	evIdle                       // a source read everything (with checkpoints), or took the stop checkpoint
	evEndSource                  // a source must end its outputs (after the final checkpoint, or without checkpoints)
	evFinish                     // its input ended: the operator finishes
	evAllEnded                   // every output sent its end
	evStop                       // the actor is stopping
)

var eventNames = [...]string{"wire", "start", "idle", "end source", "finish", "all ended", "stop"}

func (e taskEvent) String() string {
	if int(e) < len(eventNames) {
		return eventNames[e]
	}
	return fmt.Sprintf("event(%d)", int(e))
}

var setupNames = [...]string{"created", "wired", "started before wiring", "running"}
var workNames = [...]string{"reading", "idle", "ending", "finishing", "finished", "stopping"}

// String renders the phase for errors and logs.
func (p taskPhase) String() string {
	return fmt.Sprintf("%s/%s", setupNames[p.setup], workNames[p.work])
}

// on returns the phase after ev, or an error naming an event the phase
// cannot take. Repeats that the task's messages can cause (a second end of a
// source, a stop checkpoint at an idle or ending source, finish called again
// while outputs end) leave the phase as it is.
func (p taskPhase) on(ev taskEvent) (taskPhase, error) {
	bad := func() (taskPhase, error) {
		return p, fmt.Errorf("task phase %v cannot take event %q", p, ev)
	}
	if p.work == workStopping {
		return p, nil // the actor is going away: nothing matters any more
	}
	switch ev {
	case evWire:
		switch p.setup {
		case setupCreated:
			p.setup = setupWired
		case setupStartedEarly:
			p.setup = setupRunning
		default:
			return bad()
		}
	case evStart:
		switch p.setup {
		case setupCreated:
			p.setup = setupStartedEarly
		case setupWired:
			p.setup = setupRunning
		default:
			return bad()
		}
	case evIdle:
		switch p.work {
		case workReading:
			p.work = workIdle
		case workIdle, workEnding, workFinishing:
		default:
			return bad()
		}
	case evEndSource:
		switch p.work {
		case workReading, workIdle:
			p.work = workEnding
		case workEnding, workFinishing, workFinished:
		default:
			return bad()
		}
	case evFinish:
		if p.setup != setupRunning {
			return bad()
		}
		switch p.work {
		case workReading, workEnding:
			p.work = workFinishing
		case workFinishing:
		default:
			return bad()
		}
	case evAllEnded:
		if p.work != workFinishing {
			return bad()
		}
		p.work = workFinished
	case evStop:
		p.work = workStopping
	default:
		return bad()
	}
	return p, nil
}

// wired reports whether the outputs are wired.
func (p taskPhase) wired() bool { return p.setup == setupWired || p.setup == setupRunning }

// running reports whether the task may do work: wired and started, not
// finished, not stopping.
func (p taskPhase) running() bool {
	return p.setup == setupRunning && p.work != workFinished && p.work != workStopping
}
