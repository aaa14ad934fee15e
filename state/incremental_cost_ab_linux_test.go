//go:build linux

package state

import (
	"fmt"
	"runtime"
	"slices"
	"syscall"
	"testing"
	"time"
)

// threadCPU is the CPU time the calling OS thread has used.
func threadCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_THREAD, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// costSide is one half of an A/B: a backend with or without change tracking
// and the thread CPU time it took.
type costSide struct {
	incr bool
	be   *Backend
	vt   *ValueTable[snapEntry]
	keys []string
	id   uint64
	next int // the hot key updated next
}

// BenchmarkIncrementalCostAB runs the two halves of each cell of
// BenchmarkIncrementalCost{Update,Encode} in one process, alternating, on
// one locked OS thread, and times each piece of work by that thread's CPU
// time, so that a busy machine weighs on both alike. One op is a round:
// costKeys/10 updates on each side, then, every 10th round (every costKeys
// updates), one checkpoint taken, encoded and confirmed on each side. It
// reports each side's CPU per update over all rounds (full-upd-ns,
// incr-upd-ns), the median over rounds of its CPU per checkpoint
// (full-ckpt-ms, incr-ckpt-ms), and the ratios incr/full.
func BenchmarkIncrementalCostAB(b *testing.B) {
	for _, pct := range costCells {
		b.Run(fmt.Sprintf("changing=%d", pct), func(b *testing.B) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			var sides [2]*costSide
			for i, incr := range []bool{false, true} {
				be, vt, keys := costBackend(b, incr)
				sides[i] = &costSide{incr: incr, be: be, vt: vt, keys: keys, id: 1}
			}
			hot := costKeys * pct / 100
			stride := costKeys / hot
			const chunk = costKeys / 10
			var updCPU [2]time.Duration // summed: see below
			var updN [2]int
			var ckpt [2][]float64
			round := 0
			b.ResetTimer()
			for range b.N {
				round++
				for k := range sides {
					i := k
					if round%2 == 0 {
						i = 1 - k // the other side first every other round
					}
					s := sides[i]
					c0 := threadCPU(b)
					for range chunk {
						key := s.next * stride
						costUpdate(s.vt, key%128, s.keys[key])
						if s.next++; s.next == hot {
							s.next = 0
						}
					}
					updCPU[i] += threadCPU(b) - c0
					updN[i] += chunk
					if round%10 == 0 {
						s.id++
						c0 := threadCPU(b)
						costCheckpoint(b, s.be, s.id, s.incr)
						ckpt[i] = append(ckpt[i], float64(threadCPU(b)-c0)/1e6)
					}
				}
			}
			report := func(name string, v [2][]float64) {
				if len(v[0]) == 0 {
					return
				}
				f, in := medianOf(v[0]), medianOf(v[1])
				b.ReportMetric(f, "full-"+name)
				b.ReportMetric(in, "incr-"+name)
				b.ReportMetric(in/f, "incr/full-"+name)
			}
			// A round's updates take less CPU than the thread's clock
			// resolves (here it moves in 4 ms steps, 200 ns for a round's
			// updates): the median of rounds is then 0 or a step, by
			// chance. The sum over all rounds is not biased so.
			if updN[0] > 0 && updN[1] > 0 {
				f := float64(updCPU[0]) / float64(updN[0])
				in := float64(updCPU[1]) / float64(updN[1])
				b.ReportMetric(f, "full-upd-ns")
				b.ReportMetric(in, "incr-upd-ns")
				b.ReportMetric(in/f, "incr/full-upd-ns")
			}
			report("ckpt-ms", ckpt)
		})
	}
}

// medianOf returns the median of v (not changed).
func medianOf(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}
