//go:build !unix

package cputime

import "time"

// Now is 0 where the process's CPU time is not available.
func Now() time.Duration { return 0 }
