package placement

import (
	"errors"
	"time"

	"github.com/weirstream/weir/cluster"
)

// JobFree is how many slots the node of heartbeat hb can give a placement
// of job that replaces the job's tasks running there: its slots less those
// that other jobs use (Used counts every task of the node, Tasks[job] those
// of job) and less keep, the job's tasks placed there that stay. Never
// negative.
func JobFree(hb cluster.Heartbeat, job string, keep int) int {
	others := max(hb.Used-hb.Tasks[job], 0)
	return max(hb.Slots-others-keep, 0)
}

// JobSlots are the slots of nodes for placing every task of job anew (a
// submission or a takeover, which replaces all of the job's tasks).
func JobSlots(nodes []cluster.Heartbeat, job string) []Slot {
	slots := make([]Slot, 0, len(nodes))
	for _, n := range nodes {
		slots = append(slots, Slot{Node: n.Node, Free: JobFree(n, job, 0)})
	}
	return slots
}

// Wait is what a coordinator does while a job does not fit on the
// live nodes: it tries again after First, doubling the wait up to Max,
// until Timeout has passed since the first try; then it gives up.
type Wait struct {
	Timeout time.Duration
	First   time.Duration
	Max     time.Duration
}

// Next decides after failed try number attempt (0 for the first) at now, the
// first try having been at start: wait this long and try again, or give up.
// The wait never runs past the timeout, so the last try is at the timeout.
func (w Wait) Next(start, now time.Time, attempt int) (wait time.Duration, giveUp bool) {
	left := w.Timeout - now.Sub(start)
	if left <= 0 {
		return 0, true
	}
	wait = max(w.First, time.Millisecond)
	for i := 0; i < attempt && wait < w.Max; i++ {
		wait *= 2
	}
	if w.Max > 0 {
		wait = min(wait, w.Max)
	}
	return min(wait, left), false
}

// Waitable reports whether a placement error may pass by waiting for nodes
// to join or free slots.
func Waitable(err error) bool { return errors.Is(err, ErrNotEnoughSlots) }
