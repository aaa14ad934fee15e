package placement

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/weirstream/weir/cluster"
)

func TestJobFree(t *testing.T) {
	for _, tc := range []struct {
		name string
		hb   cluster.Heartbeat
		keep int
		want int
	}{
		{"idle node", cluster.Heartbeat{Node: "n", Slots: 4}, 0, 4},
		{"the job's own tasks count as free", cluster.Heartbeat{Node: "n", Slots: 4, Used: 3, Tasks: map[string]int{"j": 3}}, 0, 4},
		{"other jobs' tasks do not", cluster.Heartbeat{Node: "n", Slots: 4, Used: 3, Tasks: map[string]int{"j": 1, "k": 2}}, 0, 2},
		{"tasks of the job that stay are kept", cluster.Heartbeat{Node: "n", Slots: 4, Used: 3, Tasks: map[string]int{"j": 3}}, 2, 2},
		{"a node without per-job counts: every used slot is taken", cluster.Heartbeat{Node: "n", Slots: 4, Used: 3}, 0, 1},
		{"over capacity is no slot, not a negative one", cluster.Heartbeat{Node: "n", Slots: 4, Used: 6, Tasks: map[string]int{"k": 6}}, 0, 0},
		{"a leaving node gives none", cluster.Heartbeat{Node: "n", Slots: 0, Used: 2, Tasks: map[string]int{"j": 2}}, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := JobFree(tc.hb, "j", tc.keep); got != tc.want {
				t.Fatalf("JobFree = %d, want %d", got, tc.want)
			}
		})
	}
}

// TestJobSlotsFitATakeover is issue 16's case: the coordinator's node died;
// the two live nodes (4 slots each) still run 5 of the job's 7 tasks. Free
// slots from Used alone are 3 and the job "does not fit"; counting the
// job's own tasks as free, it does.
func TestJobSlotsFitATakeover(t *testing.T) {
	tasks := ops("count", 3, "sink", 1, "source", 3)
	live := []cluster.Heartbeat{
		{Node: "n1", Slots: 4, Used: 3, Tasks: map[string]int{"keycount": 3}},
		{Node: "n2", Slots: 4, Used: 2, Tasks: map[string]int{"keycount": 2}},
	}
	var fromUsed []Slot
	for _, hb := range live {
		fromUsed = append(fromUsed, Slot{Node: hb.Node, Free: hb.Slots - hb.Used})
	}
	if _, err := Place(tasks, fromUsed, nil); !errors.Is(err, ErrNotEnoughSlots) {
		t.Fatalf("free slots from Used: want ErrNotEnoughSlots, got %v", err)
	}
	slots := JobSlots(live, "keycount")
	if !slices.Equal(slots, []Slot{{"n1", 4}, {"n2", 4}}) {
		t.Fatalf("JobSlots = %v", slots)
	}
	got, err := Place(tasks, slots, nil)
	if err != nil {
		t.Fatal(err)
	}
	per := map[string]int{}
	for _, n := range got {
		per[n]++
	}
	if per["n1"]+per["n2"] != 7 || per["n1"] > 4 || per["n2"] > 4 {
		t.Fatalf("placement %v over capacity", got)
	}
	// Another job's tasks are not the job's to replace.
	other := []cluster.Heartbeat{{Node: "n1", Slots: 4, Used: 3, Tasks: map[string]int{"other": 3}}, live[1]}
	if _, err := Place(tasks, JobSlots(other, "keycount"), nil); !errors.Is(err, ErrNotEnoughSlots) {
		t.Fatalf("other job's slots: want ErrNotEnoughSlots, got %v", err)
	}
}

func TestWait(t *testing.T) {
	w := Wait{Timeout: 10 * time.Second, First: 250 * time.Millisecond, Max: 2 * time.Second}
	t0 := time.Unix(100, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	for _, tc := range []struct {
		name     string
		now      time.Time
		attempt  int
		wantWait time.Duration
		wantGive bool
	}{
		{"first failure waits First", at(0), 0, 250 * time.Millisecond, false},
		{"doubles", at(250), 1, 500 * time.Millisecond, false},
		{"doubles again", at(750), 2, time.Second, false},
		{"capped at Max", at(1750), 5, 2 * time.Second, false},
		{"never past the timeout", at(9500), 6, 500 * time.Millisecond, false},
		{"at the timeout: give up", at(10000), 7, 0, true},
		{"after the timeout: give up", at(12000), 1, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wait, give := w.Next(t0, tc.now, tc.attempt)
			if wait != tc.wantWait || give != tc.wantGive {
				t.Fatalf("Next = %v, %v; want %v, %v", wait, give, tc.wantWait, tc.wantGive)
			}
		})
	}
	if wait, give := (Wait{}).Next(t0, t0, 0); !give || wait != 0 {
		t.Fatalf("zero timeout: Next = %v, %v; want give up at once", wait, give)
	}
}

func TestWaitable(t *testing.T) {
	_, err := Place(ops("a", 2), []Slot{{"n", 1}}, nil)
	if !Waitable(err) {
		t.Fatalf("not enough slots must be waitable: %v", err)
	}
	if Waitable(errors.New("node listed twice")) || Waitable(nil) {
		t.Fatal("other errors are not waitable")
	}
}
