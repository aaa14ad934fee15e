// Package poll is how tests wait: a condition is checked on a ticker until
// it holds or a deadline passes, so a test neither sleeps and hopes nor
// waits longer than it must.
package poll

import "time"

// Every is the default interval between checks.
const Every = 2 * time.Millisecond

// Until checks cond now and then every interval until it holds or within
// has passed; it reports whether cond held.
func Until(within, every time.Duration, cond func() bool) bool {
	if cond() {
		return true
	}
	deadline := time.NewTimer(within)
	defer deadline.Stop()
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-deadline.C:
			return cond()
		case <-tick.C:
			if cond() {
				return true
			}
		}
	}
}
