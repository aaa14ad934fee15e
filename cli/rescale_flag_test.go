package cli

import (
	"strings"
	"testing"
	"time"
)

func TestRescaleScheduleFlag(t *testing.T) {
	var r rescaleSchedule
	if err := r.Set("2s:count=3,sink=3, 4s:count=1"); err != nil {
		t.Fatal(err)
	}
	if err := r.Set("6s:count=4"); err != nil {
		t.Fatal(err)
	}
	if len(r) != 3 || r[0].After != 2*time.Second || r[0].Parallelism["sink"] != 3 || r[2].Parallelism["count"] != 4 {
		t.Fatalf("schedule %+v", r)
	}
	if got := r.String(); got != "2s:count=3,sink=3,4s:count=1,6s:count=4" {
		t.Fatalf("String() = %q", got)
	}
	bad := []struct{ in, want string }{
		{"count=3", "starts with a time"},
		{"2x:count=3", "positive time"},
		{"0s:count=3", "positive time"},
		{"2s:count", "want TIME:NAME=N"},
		{"2s:=3", "want TIME:NAME=N"},
		{"2s:count=0", "parallelism from 1 to 128"},
		{"2s:count=129", "parallelism from 1 to 128"},
		{"2s:count=3,count=4", `operator "count" is named twice in the step at 2s`},
		{"2s:count=3,1s:count=4", "must increase"},
		{"2s:count=3,2s:count=4", "must increase"},
	}
	for _, b := range bad {
		var r rescaleSchedule
		if err := r.Set(b.in); err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("Set(%q) = %v, want an error containing %q", b.in, err, b.want)
		}
	}
}
