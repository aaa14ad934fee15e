package checkpoints

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/weirstream/weir/internal/task"
)

func TestNewCopiesTasks(t *testing.T) {
	tasks := []task.ID{{Operator: "a", Instance: 0}}
	c, err := New(Config{Interval: 0, Timeout: time.Second, Retain: 1, Tasks: tasks}, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	tasks[0] = task.ID{Operator: "b", Instance: 0}
	if got := c.Tick(0); !slices.Equal(got, []Action{Trigger{ID: 1}}) {
		t.Fatalf("Tick = %v", got)
	}
	if got := c.OnAck(1, task.ID{Operator: "a", Instance: 0}, 0); !slices.Equal(got, []Action{WriteManifest{ID: 1}}) {
		t.Fatalf("ack from the configured task: %v", got)
	}
}

func TestInvalidConfigIsClassified(t *testing.T) {
	_, err := New(Config{Timeout: time.Second, Retain: 1}, 0, 0)
	if !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("New without tasks: %v, want ErrInvalidConfig", err)
	}
}

func TestCompletedIsACopy(t *testing.T) {
	c, err := New(Config{Timeout: time.Second, Retain: 2, Tasks: []task.ID{{Operator: "a", Instance: 0}}}, 5, 0)
	if err != nil {
		t.Fatal(err)
	}
	c.Completed()[0] = 99
	if got := c.Completed(); !slices.Equal(got, []uint64{5}) {
		t.Fatalf("Completed() = %v after the caller changed its copy", got)
	}
}

func BenchmarkCheckpointCycle(b *testing.B) {
	for _, n := range []int{4, 64} {
		b.Run(fmt.Sprintf("tasks=%d", n), func(b *testing.B) {
			var tasks []task.ID
			for i := range n {
				tasks = append(tasks, task.ID{Operator: "op", Instance: i})
			}
			c, err := New(Config{Timeout: time.Hour, Retain: 3, Tasks: tasks}, 0, 0)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			var now time.Duration
			for b.Loop() {
				now += time.Millisecond
				acts := c.Tick(now)
				id := acts[len(acts)-1].(Trigger).ID
				for _, tk := range tasks {
					c.OnAck(id, tk, now)
				}
				c.OnManifestWritten(id, now)
			}
		})
	}
}

func TestCancelFinal(t *testing.T) {
	tasks := []task.ID{{Operator: "src", Instance: 0}, {Operator: "sink", Instance: 0}}
	c, err := New(Config{Interval: time.Second, Timeout: time.Minute, Retain: 2, Tasks: tasks}, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	acts := c.RequestFinal(0)
	if len(acts) != 1 || !acts[0].(Trigger).Final {
		t.Fatalf("RequestFinal = %v, want a final trigger", acts)
	}
	// A source restarts: the final request is withdrawn and the checkpoint in
	// flight is aborted by the failed task; nothing is retried as final.
	c.CancelFinal()
	acts = c.OnDecline(1, tasks[0], "task failed", time.Millisecond)
	for _, a := range acts {
		if tr, ok := a.(Trigger); ok {
			t.Fatalf("after CancelFinal an abort triggered %v", tr)
		}
	}
	if _, ok := c.Pending(); ok {
		t.Fatal("a checkpoint is still pending after the abort")
	}
	// Sources are done again: the final checkpoint is requested anew and completes.
	acts = c.RequestFinal(2 * time.Millisecond)
	if len(acts) != 1 || !acts[0].(Trigger).Final {
		t.Fatalf("second RequestFinal = %v", acts)
	}
	id := acts[0].(Trigger).ID
	c.OnAck(id, tasks[0], 3*time.Millisecond)
	acts = c.OnAck(id, tasks[1], 3*time.Millisecond)
	if w, ok := c.Writing(); !ok || w != id {
		t.Fatalf("Writing = %d, %v after all acks (%v)", w, ok, acts)
	}
	acts = c.OnManifestWritten(id, 4*time.Millisecond)
	if !c.FinalDone() {
		t.Fatalf("final not done after %v", acts)
	}
	c.CancelFinal() // too late: no effect
	if !c.FinalDone() {
		t.Fatal("CancelFinal undid a completed final checkpoint")
	}
}

// TestHoldStopsOnlyThePeriodicTriggers: a held coordinator triggers no
// ordinary checkpoint however long it is held, lets the one in flight
// complete, still takes the final checkpoint, and triggers at the first
// Tick after the hold ends.
func TestHoldStopsOnlyThePeriodicTriggers(t *testing.T) {
	a := task.ID{Operator: "a", Instance: 0}
	c, err := New(Config{Interval: 100 * time.Millisecond, Timeout: time.Hour, Retain: 2, Tasks: []task.ID{a}, Sources: []task.ID{a}}, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Tick(100 * time.Millisecond); !slices.Equal(got, []Action{Trigger{ID: 1}}) {
		t.Fatalf("first Tick = %v", got)
	}
	c.Hold(true)
	if got := c.OnAck(1, a, 150*time.Millisecond); !slices.Equal(got, []Action{WriteManifest{ID: 1}}) {
		t.Fatalf("ack of the checkpoint in flight while held: %v", got)
	}
	if got := c.OnManifestWritten(1, 160*time.Millisecond); len(got) != 1 {
		t.Fatalf("manifest of the checkpoint in flight while held: %v", got)
	} else if done, ok := got[0].(Completed); !ok || done.ID != 1 {
		t.Fatalf("manifest of the checkpoint in flight while held: %v, want it completed", got)
	}
	for now := 200 * time.Millisecond; now < 5*time.Second; now += 50 * time.Millisecond {
		if got := c.Tick(now); len(got) != 0 {
			t.Fatalf("Tick at %v while held = %v, want nothing", now, got)
		}
	}
	c.Hold(false)
	if got := c.Tick(5 * time.Second); !slices.Equal(got, []Action{Trigger{ID: 2}}) {
		t.Fatalf("first Tick after the hold = %v, want checkpoint 2", got)
	}
	if got := c.OnAck(2, a, 5100*time.Millisecond); !slices.Equal(got, []Action{WriteManifest{ID: 2}}) {
		t.Fatalf("ack 2: %v", got)
	}
	c.OnManifestWritten(2, 5100*time.Millisecond)
	c.Hold(true)
	got := c.OnSourceIdle(a, 5200*time.Millisecond)
	if len(got) != 1 {
		t.Fatalf("end of input while held = %v, want the final checkpoint", got)
	}
	if tr, ok := got[0].(Trigger); !ok || !tr.Final {
		t.Fatalf("end of input while held = %v, want the final checkpoint", got)
	}
}
