package cli

import (
	"flag"
	"strings"
	"testing"
)

// checkRunFlags parses args as `node run` flags and checks them as parseJob
// does, without building the job.
func checkRunFlags(args []string) error {
	_, err := parseRunFlags(args)
	return err
}

// parseRunFlags parses and checks node run's flags as the command does and
// returns them.
func parseRunFlags(args []string) (*runFlags, error) {
	var f runFlags
	fs := newRunFlagSet(&f)
	if _, err := parseInterleaved(fs, args); err != nil {
		return nil, err
	}
	f.set = map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { f.set[fl.Name] = true })
	return &f, f.finish()
}

// TestFlagBounds checks each numeric flag just inside and just outside its
// range, and values that used to crash or stall a run: outside is an error
// naming the flag, the value and the range; inside is accepted.
func TestFlagBounds(t *testing.T) {
	for _, tc := range []struct {
		flag, value string
		want        string // "" when the value is accepted
	}{
		{"parallelism", "128", ""},
		{"parallelism", "129", "--parallelism 129 is out of range: want 1 to 128"},
		{"records", "-1", ""},
		{"records", "1000000000000", ""},
		{"records", "1000000000001", "--records 1000000000001 is out of range: want -1 (unbounded) or 0 to 1000000000000"},
		{"keys", "1000000", ""},
		{"keys", "99999999999", "--keys 99999999999 is out of range: want 1 to 1000000"},
		{"sleep-ms", "1000", ""},
		{"sleep-ms", "1000.5", "--sleep-ms 1000.5 is out of range: want 0 to 1000"},
		{"sleep-ms", "NaN", "--sleep-ms NaN is out of range: want 0 to 1000"},
		{"duration", "720h", ""},
		{"duration", "721h", "--duration 721h0m0s is out of range: want 0 (no limit) or 1ms to 720h"},
		{"batch-size", "0", ""},
		{"batch-size", "65536", ""},
		{"batch-size", "1000000000", "--batch-size 1000000000 is out of range: want 0 (runtime default) or 1 to 65536"},
		{"channel-capacity", "1024", ""},
		{"channel-capacity", "1025", "--channel-capacity 1025 is out of range: want 0 (runtime default) or 1 to 1024"},
		{"channel-capacity", "-1", "--channel-capacity -1 is out of range"},
		{"flush-interval", "0s", ""},
		{"flush-interval", "1ns", "--flush-interval 1ns is out of range: want 0 (runtime default) or 100µs to 10s"},
		{"flush-interval", "11s", "--flush-interval 11s is out of range"},
		{"checkpoint-interval", "1ms", ""},
		{"checkpoint-interval", "2h", "--checkpoint-interval 2h0m0s is out of range: want 1ms to 1h"},
		{"checkpoint-timeout", "10ms", ""},
		{"checkpoint-timeout", "1ms", "--checkpoint-timeout 1ms is out of range: want 10ms to 24h"},
		{"checkpoint-timeout", "0s", "--checkpoint-timeout 0s is out of range"},
		{"retain", "1000", ""},
		{"retain", "1001", "--retain 1001 is out of range: want 1 to 1000"},
		{"max-concurrent-checkpoints", "16", ""},
		{"max-concurrent-checkpoints", "0", "--max-concurrent-checkpoints 0 is out of range: want 1 to 16"},
		{"max-concurrent-checkpoints", "17", "--max-concurrent-checkpoints 17 is out of range: want 1 to 16"},
		{"max-restarts", "0", ""},
		{"max-restarts", "10001", "--max-restarts 10001 is out of range: want 0 to 10000"},
		{"max-restarts", "-1", "--max-restarts -1 is out of range"},
		{"restart-window", "24h", ""},
		{"restart-window", "0s", "--restart-window 0s is out of range: want 1ms to 24h"},
		{"chaos-kill-every", "1ms", ""},
		{"chaos-kill-every", "500us", "--chaos-kill-every 500µs is out of range: want 0 (never) or 1ms to 1h"},
	} {
		args := []string{"--" + tc.flag, tc.value}
		if tc.flag == "chaos-kill-every" {
			args = append(args, "--checkpoint-mode", "aligned")
		}
		t.Run(tc.flag+" "+tc.value, func(t *testing.T) {
			err := checkRunFlags(args)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("%v: %v, want it accepted", args, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("%v: error %v, want one containing %q", args, err, tc.want)
			}
		})
	}
}

// TestFlagBoundsExitUsage: `node run` and `node submit` with a value out of
// range exit 2 with one line and start nothing (these two used to die of
// out-of-memory, and to take 34 s for 10 records).
func TestFlagBoundsExitUsage(t *testing.T) {
	for _, cmd := range []string{"run", "submit"} {
		for _, bad := range [][]string{{"--keys", "99999999999"}, {"--records", "10", "--batch-size", "1000000000"}} {
			args := append([]string{cmd, "keycount"}, bad...)
			t.Run(strings.Join(args, " "), func(t *testing.T) {
				r := runMain(t, args...)
				if r.code != ExitUsage {
					t.Fatalf("exit %d, want %d; stderr %q", r.code, ExitUsage, r.stderr)
				}
				if strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 || !strings.Contains(r.stderr, "is out of range: want ") {
					t.Fatalf("stderr %q, want one line stating the range", r.stderr)
				}
			})
		}
	}
}

// TestHelpStatesFlagBounds: `node help run` states every range the flags
// are checked against.
func TestHelpStatesFlagBounds(t *testing.T) {
	r := runMain(t, "help", "run")
	for _, rg := range intRanges {
		if !strings.Contains(r.stdout, rg.text()) {
			t.Errorf("help does not state --%s: %s", rg.name, rg.text())
		}
	}
	for _, rg := range durRanges {
		if !strings.Contains(r.stdout, rg.text()) {
			t.Errorf("help does not state --%s: %s", rg.name, rg.text())
		}
	}
	if !strings.Contains(r.stdout, "in ms (e.g. 0.01); "+sleepMsText) {
		t.Errorf("help does not state --sleep-ms: %s", sleepMsText)
	}
}
