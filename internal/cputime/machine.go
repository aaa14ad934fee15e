package cputime

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"time"
)

// clockTick is the unit of /proc/stat's times: USER_HZ, 100 on every
// Linux the project runs on.
const clockTick = 10 * time.Millisecond

// Machine is the CPU time all of the machine's cores have spent busy so
// far (user, nice, system, irq and softirq: not idle, waiting for I/O or
// stolen), whichever process or kernel thread used it, to a clock tick
// (10 ms). It is false where the system does not say (no /proc/stat).
func Machine() (time.Duration, bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, false
	}
	busy, err := parseMachineBusy(b)
	if err != nil {
		return 0, false
	}
	return busy, true
}

// parseMachineBusy reads the busy time from /proc/stat's first line, "cpu"
// and the ticks every core spent in user, nice, system, idle, iowait, irq,
// softirq, steal, guest and guest_nice (guest time is in user's already).
func parseMachineBusy(stat []byte) (time.Duration, error) {
	line, _, _ := bytes.Cut(stat, []byte("\n"))
	f := bytes.Fields(line)
	if len(f) < 8 || string(f[0]) != "cpu" {
		return 0, fmt.Errorf("cputime: /proc/stat starts %q, not the cpu line with at least 7 times", line)
	}
	var busy int64
	for i, name := range []string{"user", "nice", "system", "idle", "iowait", "irq", "softirq"} {
		n, err := strconv.ParseInt(string(f[i+1]), 10, 64)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("cputime: /proc/stat's %s time %q is not a count of ticks", name, f[i+1])
		}
		if name != "idle" && name != "iowait" {
			busy += n
		}
	}
	return time.Duration(busy) * clockTick, nil
}
