//go:build unix

package state

import (
	"syscall"
	"time"
)

// cpuNow is the CPU time this process has used so far: benchmarks report it
// because wall time on a shared machine says little.
func cpuNow() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
