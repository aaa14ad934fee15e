package cputime

import (
	"strings"
	"testing"
	"time"
)

// TestParseMachineBusy: busy is user, nice, system, irq and softirq, in
// clock ticks of 10 ms; idle, iowait, steal and guest do not count; a
// first line that is not the cpu line, or a time that is not a count, is
// an error that names it.
func TestParseMachineBusy(t *testing.T) {
	t.Parallel()
	stat := "cpu  100 2 30 5000 70 4 5 900 11 0\ncpu0 50 1 15 2500 35 2 2 450 5 0\nintr 1\n"
	got, err := parseMachineBusy([]byte(stat))
	if want := (100 + 2 + 30 + 4 + 5) * 10 * time.Millisecond; err != nil || got != want {
		t.Errorf("busy %v, %v; want %v", got, err, want)
	}
	for _, bad := range []struct{ stat, says string }{
		{"cpu0 1 2 3 4 5 6 7\n", "cpu0"},
		{"cpu  1 2 3 4\n", "at least 7"},
		{"cpu  1 2 x 4 5 6 7\n", `system time "x"`},
		{"cpu  1 2 3 4 5 6 -7\n", `softirq time "-7"`},
		{"", "not the cpu line"},
	} {
		_, err := parseMachineBusy([]byte(bad.stat))
		if err == nil || !strings.Contains(err.Error(), bad.says) {
			t.Errorf("%q: error %v, want one saying %q", bad.stat, err, bad.says)
		}
	}
}
