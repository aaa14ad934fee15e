//go:build unix

// Package cputime reads the CPU time this process has used, for benchmarks
// that report it beside wall time (which says little on a shared machine).
package cputime

import (
	"syscall"
	"time"
)

// Now is the user plus system CPU time this process has used so far (0 if
// the system does not say).
func Now() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
