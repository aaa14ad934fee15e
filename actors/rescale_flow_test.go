package actors

import (
	"testing"
	"time"

	"github.com/weirstream/weir/keygroups"
	"github.com/weirstream/weir/rescale/flow"
)

// TestFlowOfALongRescale: an instance processes 10 records per 100 ms
// bucket, each having waited 1 ms, for 5 s before a rescale and through
// the 25 s it runs. The figures keep the throughput and the waits before
// it and count no bucket empty. Before, an instance kept 8 s of buckets:
// a rescale that took 30 s reported "throughput 0/s before, lowest 100 ms
// bucket 0/s (219 of 298 empty)" though records flowed throughout.
func TestFlowOfALongRescale(t *testing.T) {
	start := time.Unix(1_800_000_000, 0)
	end := start.Add(25 * time.Second)
	f := &taskFlow{}
	for at := start.Add(-5 * time.Second); at.Before(end); at = at.Add(flow.Bucket) {
		b := flow.BucketOf(at)
		f.count(b).records += 10
		if at.Before(start) {
			f.wait(b).wait.Add(time.Millisecond, 10)
			continue
		}
		f.under(at, 1, []keygroups.Move{{Group: 3}})
		f.unmoved.Add(time.Millisecond, 10)
	}
	fl := flow.Figures([]*flow.Task{f.task(end, false)}, start, end)
	if fl == nil {
		t.Fatal("no figures")
	}
	if fl.SteadyPerS != 100 || fl.ZeroBuckets != 0 || fl.Buckets < 249 || fl.LowestPerS != 100 {
		t.Fatalf("throughput %v/s before, lowest %v/s, %d of %d buckets empty; want 100/s, 100/s, none of 250",
			fl.SteadyPerS, fl.LowestPerS, fl.ZeroBuckets, fl.Buckets)
	}
	if want := int64(flow.BeforeWindow / flow.Bucket * 10); fl.Before.Records != want || fl.Unmoved.Records != 2500 {
		t.Fatalf("waits of %d records before (want %d) and %d unmoved during (want 2500)", fl.Before.Records, want, fl.Unmoved.Records)
	}
	if !f.moving[3] || len(f.moving) != 1 {
		t.Fatalf("moving groups %v, want group 3", f.moving)
	}
}
