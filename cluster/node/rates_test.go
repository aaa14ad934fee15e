package node

import (
	"math"
	"testing"
	"time"

	"github.com/weirstream/weir/actors"
)

// TestRatesBetween computes rates from two scripted samples: records per
// second from the job's counters, and per operator the share of the window
// its instances were backpressured or busy, averaged; an instance that
// started between the samples is left out, and shares stay within 0 … 1.
func TestRatesBetween(t *testing.T) {
	t0 := time.Unix(100, 0)
	task := func(op string, i int, in int64, busy, bp time.Duration) actors.TaskFigures {
		return actors.TaskFigures{Operator: op, Instance: i, RecordsIn: in, Busy: busy, Backpressured: bp}
	}
	base := rateSample{at: t0, in: 1000, out: 500, tasks: []actors.TaskFigures{
		task("count", 0, 100, 0, 0), task("count", 1, 100, 0, 0), task("source", 0, 1000, 0, time.Second),
	}}
	cur := rateSample{at: t0.Add(2 * time.Second), in: 5000, out: 4500, tasks: []actors.TaskFigures{
		task("count", 0, 2100, time.Second, 0), task("count", 1, 1100, 2*time.Second, 0),
		task("source", 0, 5000, 0, 4*time.Second), // more than the window: clamped to 1
		task("sink", 0, 4000, time.Second, 0),     // new since base: left out
	}}
	r, ok := ratesBetween("keycount", base, cur)
	if !ok {
		t.Fatal("no rates")
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	if r.Job != "keycount" || !near(r.WindowS, 2) || !near(r.RecordsInPerS, 2000) || !near(r.RecordsOutPerS, 2000) {
		t.Fatalf("job rates %+v", r)
	}
	want := []OperatorRates{
		{Operator: "count", Tasks: 2, RecordsInPerS: 1500, Backpressured: 0, Busy: 0.75},
		{Operator: "source", Tasks: 1, RecordsInPerS: 2000, Backpressured: 1, Busy: 0},
	}
	if len(r.Operators) != len(want) {
		t.Fatalf("operators %+v, want %+v", r.Operators, want)
	}
	for i, w := range want {
		g := r.Operators[i]
		if g.Operator != w.Operator || g.Tasks != w.Tasks || !near(g.RecordsInPerS, w.RecordsInPerS) ||
			!near(g.Backpressured, w.Backpressured) || !near(g.Busy, w.Busy) {
			t.Errorf("operator %d: %+v, want %+v", i, g, w)
		}
	}
	if _, ok := ratesBetween("keycount", cur, cur); ok {
		t.Error("rates over an empty window")
	}
}
