package checkpoints

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"
)

func TestNewCopiesTasks(t *testing.T) {
	tasks := []TaskID{{"a", 0}}
	c, err := New(Config{Interval: 0, Timeout: time.Second, Retain: 1, Tasks: tasks}, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	tasks[0] = TaskID{"b", 0}
	if got := c.Tick(0); !slices.Equal(got, []Action{Trigger{ID: 1}}) {
		t.Fatalf("Tick = %v", got)
	}
	if got := c.OnAck(1, TaskID{"a", 0}, 0); !slices.Equal(got, []Action{WriteManifest{ID: 1}}) {
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
	c, err := New(Config{Timeout: time.Second, Retain: 2, Tasks: []TaskID{{"a", 0}}}, 5, 0)
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
			var tasks []TaskID
			for i := range n {
				tasks = append(tasks, TaskID{Operator: "op", Instance: i})
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
				for _, task := range tasks {
					c.OnAck(id, task, now)
				}
				c.OnManifestWritten(id, now)
			}
		})
	}
}
