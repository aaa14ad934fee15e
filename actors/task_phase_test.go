package actors

import (
	"strings"
	"testing"
)

// TestTaskPhaseTransitions walks the task's lives event by event: each step
// gives the phase reached, or the error an illegal event must give.
func TestTaskPhaseTransitions(t *testing.T) {
	tests := []struct {
		name  string
		steps []taskEvent
		want  string // the final phase, or "error: <substring>"
	}{
		{"source with checkpoints", []taskEvent{evWire, evStart, evIdle, evEndSource, evFinish, evAllEnded}, "running/finished"},
		{"source without checkpoints", []taskEvent{evWire, evStart, evEndSource, evFinish, evAllEnded}, "running/finished"},
		{"transform", []taskEvent{evWire, evStart, evFinish, evFinish, evAllEnded}, "running/finished"},
		{"start overtakes wire", []taskEvent{evStart, evWire}, "running/reading"},
		{"wired only", []taskEvent{evWire}, "wired/reading"},
		{"started only", []taskEvent{evStart}, "started before wiring/reading"},
		{"drained before it was wired", []taskEvent{evIdle, evWire, evStart}, "running/idle"},
		{"ended before it was started", []taskEvent{evEndSource, evStart, evWire}, "running/ending"},
		{"stop checkpoint at an idle source", []taskEvent{evWire, evStart, evIdle, evIdle}, "running/idle"},
		{"stop checkpoint at an ending source", []taskEvent{evWire, evStart, evEndSource, evIdle}, "running/ending"},
		{"second end of a source", []taskEvent{evWire, evStart, evEndSource, evFinish, evEndSource}, "running/finishing"},
		{"end after finished", []taskEvent{evWire, evStart, evEndSource, evFinish, evAllEnded, evEndSource}, "running/finished"},
		{"stop from any phase", []taskEvent{evWire, evStart, evIdle, evStop}, "running/stopping"},
		{"nothing moves a stopping task", []taskEvent{evStop, evWire, evWire, evAllEnded}, "created/stopping"},
		{"wired twice", []taskEvent{evWire, evWire}, `error: task phase wired/reading cannot take event "wire"`},
		{"started twice", []taskEvent{evWire, evStart, evStart}, `error: task phase running/reading cannot take event "start"`},
		{"started twice before wiring", []taskEvent{evStart, evStart}, `error: cannot take event "start"`},
		{"finish before running", []taskEvent{evWire, evFinish}, `error: task phase wired/reading cannot take event "finish"`},
		{"an idle source does not finish", []taskEvent{evWire, evStart, evIdle, evFinish}, `error: task phase running/idle cannot take event "finish"`},
		{"all ended before finishing", []taskEvent{evWire, evStart, evAllEnded}, `error: cannot take event "all ended"`},
		{"finished twice", []taskEvent{evWire, evStart, evFinish, evAllEnded, evAllEnded}, `error: task phase running/finished cannot take event "all ended"`},
		{"idle after finished", []taskEvent{evWire, evStart, evFinish, evAllEnded, evIdle}, `error: cannot take event "idle"`},
		{"unknown event", []taskEvent{taskEvent(99)}, `error: cannot take event "event(99)"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p taskPhase
			for i, ev := range tt.steps {
				next, err := p.on(ev)
				if err != nil {
					if i != len(tt.steps)-1 {
						t.Fatalf("step %d (%v): %v", i, ev, err)
					}
					if next != p {
						t.Errorf("an illegal event changed the phase: %v -> %v", p, next)
					}
					if want, ok := strings.CutPrefix(tt.want, "error: "); !ok || !strings.Contains(err.Error(), want) {
						t.Errorf("error %q, want %s", err, tt.want)
					}
					return
				}
				p = next
			}
			if got := p.String(); got != tt.want {
				t.Errorf("phase %s, want %s", got, tt.want)
			}
		})
	}
}

// TestTaskPhaseQueries: the task does work only when wired and started and
// neither finished nor stopping; it flushes once wired.
func TestTaskPhaseQueries(t *testing.T) {
	tests := []struct {
		p              taskPhase
		wired, running bool
	}{
		{taskPhase{setupCreated, workReading}, false, false},
		{taskPhase{setupStartedEarly, workReading}, false, false},
		{taskPhase{setupWired, workReading}, true, false},
		{taskPhase{setupRunning, workReading}, true, true},
		{taskPhase{setupRunning, workIdle}, true, true},
		{taskPhase{setupRunning, workEnding}, true, true},
		{taskPhase{setupRunning, workFinishing}, true, true},
		{taskPhase{setupRunning, workFinished}, true, false},
		{taskPhase{setupRunning, workStopping}, true, false},
	}
	for _, tt := range tests {
		if got := tt.p.wired(); got != tt.wired {
			t.Errorf("%v wired() = %v, want %v", tt.p, got, tt.wired)
		}
		if got := tt.p.running(); got != tt.running {
			t.Errorf("%v running() = %v, want %v", tt.p, got, tt.running)
		}
	}
}
