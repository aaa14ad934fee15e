package actors

import (
	"testing"

	"github.com/weirstream/weir/internal/plan"
)

func TestWatermarkTrackerScripts(t *testing.T) {
	wm := func(at int64) Mark { return Mark{Kind: WatermarkMark, At: at} }
	idle := Mark{Kind: IdleMark}
	type step struct {
		input int
		mark  Mark
		want  trackerResult
	}
	tests := []struct {
		name   string
		inputs int
		steps  []step
	}{
		{"one input advances and never goes back", 1, []step{
			{0, wm(5), trackerResult{Advanced: true, At: 5}},
			{0, wm(3), trackerResult{}},
			{0, wm(5), trackerResult{}},
			{0, wm(9), trackerResult{Advanced: true, At: 9}},
		}},
		{"minimum over inputs", 2, []step{
			{0, wm(10), trackerResult{}}, // input 1 has none yet
			{1, wm(4), trackerResult{Advanced: true, At: 4}},
			{1, wm(12), trackerResult{Advanced: true, At: 10}},
			{0, wm(11), trackerResult{Advanced: true, At: 11}},
		}},
		{"an idle input is left out, and back in when it sends again", 2, []step{
			{0, wm(10), trackerResult{}},
			{1, idle, trackerResult{Advanced: true, At: 10}},
			{0, wm(20), trackerResult{Advanced: true, At: 20}},
			{1, wm(15), trackerResult{}}, // behind: the combined one stays
			{0, wm(30), trackerResult{}}, // min 15 is behind 20
			{1, wm(25), trackerResult{Advanced: true, At: 25}},
		}},
		{"all idle makes the task idle; a mark makes it active", 2, []step{
			{0, idle, trackerResult{}},
			{1, idle, trackerResult{BecameIdle: true}},
			{1, idle, trackerResult{}},
			{0, wm(7), trackerResult{BecameActive: true, Advanced: true, At: 7}},
		}},
		{"the end of input", 2, []step{
			{0, wm(plan.MaxWatermark), trackerResult{}},
			{1, wm(3), trackerResult{Advanced: true, At: 3}},
			{1, wm(plan.MaxWatermark), trackerResult{Advanced: true, At: plan.MaxWatermark}},
		}},
		{"no mark changes nothing", 1, []step{
			{0, Mark{}, trackerResult{}},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := newWatermarkTracker(tc.inputs)
			for i, s := range tc.steps {
				if got := w.OnMark(s.input, s.mark); got != s.want {
					t.Fatalf("step %d (input %d, %+v): got %+v, want %+v", i, s.input, s.mark, got, s.want)
				}
			}
		})
	}
}

func TestWireMarkRejectsUnknownKind(t *testing.T) {
	if _, err := wireMark(9, 0); err == nil {
		t.Fatal("mark kind 9 accepted")
	}
	m, err := wireMark(uint8(WatermarkMark), 42)
	if err != nil || m != (Mark{Kind: WatermarkMark, At: 42}) {
		t.Fatalf("got %+v, %v", m, err)
	}
}
