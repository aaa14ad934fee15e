package node

import (
	"sort"
	"time"

	"github.com/weirstream/weir/actors"
	"github.com/weirstream/weir/cluster"
)

// restoredStates sums the restores of each job's tasks on this node, from
// the jobs' own restore figures, sorted by job; jobs that restored nothing
// are left out. A job may count twice (a part and the coordinated job): its
// figures add up, and its span runs from the first start to the last end
// of either.
func restoredStates(jobs map[string][]actors.RestoreStats) []cluster.RestoredState {
	var out []cluster.RestoredState
	for name, stats := range jobs {
		r := cluster.RestoredState{Job: name}
		var took, decoded time.Duration
		var first, last, lastDecoded time.Time
		for _, s := range stats {
			if s.Restores > 0 {
				if first.IsZero() || s.First.Before(first) {
					first = s.First
				}
				if s.Last.After(last) {
					last = s.Last
				}
				if s.LastDecoded.After(lastDecoded) {
					lastDecoded = s.LastDecoded
				}
			}
			r.Restores += s.Restores
			r.LocalBytes += s.Read.LocalBytes
			r.RemoteBytes += s.Read.RemoteBytes
			r.LocalSections += s.Read.LocalSections
			r.RemoteSections += s.Read.RemoteSections
			took += s.Took
			r.Decoded += s.DecodedRestores
			decoded += s.Decoded
		}
		if r.Restores == 0 {
			continue
		}
		r.TookMs = float64(took) / float64(time.Millisecond)
		r.SpanMs = float64(last.Sub(first)) / float64(time.Millisecond)
		r.DecodedMs = float64(decoded) / float64(time.Millisecond)
		if !lastDecoded.IsZero() {
			r.DecodedSpanMs = float64(lastDecoded.Sub(first)) / float64(time.Millisecond)
		}
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Job < out[j].Job })
	return out
}
