package actors

import (
	"slices"
	"time"

	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/keygroups"
	"github.com/weirstream/weir/rescale"
	"github.com/weirstream/weir/rescale/flow"
)

// An instance's record of its processing, for the figures of a rescale of
// its operator (flow.Task says what is measured): records per
// flow.Bucket over the last flowSlots buckets with the wait and the latency
// from the source (package flow) of those processed outside a rescale, and
// the same under a rescale by whether the record's key group moves. Each incarnation of the task keeps its own, on
// its goroutine.

// flowCountSlots is how many buckets of record counts an instance keeps:
// the flow.BeforeWindow before a rescale and the longest one (a rescale
// times out after rescaleTimeout) must fit, or the figures would count the
// buckets that fell out as empty.
const flowCountSlots = int64((flow.BeforeWindow+rescaleTimeout)/flow.Bucket) + 8

// flowWaitSlots is how many buckets of waits an instance keeps: those of
// the flow.BeforeWindow, taken when its first record under a rescale
// comes.
const flowWaitSlots = int64(flow.BeforeWindow/flow.Bucket) + 2

// taskFlow is one instance's record.
type taskFlow struct {
	counts [flowCountSlots]countSlot
	waits  [flowWaitSlots]waitSlot
	// seq is the rescale the waits below are of (0: none yet); began the
	// bucket of its first record; moving its key groups that move.
	seq            uint64
	began          int64
	beganAt        time.Time
	moving         map[int]bool
	moved, unmoved flow.WaitHist
	// before and srcBefore are the waits and latency from the source in
	// the flow.BeforeWindow before began.
	before, srcBefore flow.WaitHist
	// srcMoved and srcUnmoved are the same of the records' latency from
	// their source (those whose buffer's origin is known).
	srcMoved, srcUnmoved flow.WaitHist
	// groups is the waits outside a rescale per key group, srcGroups their
	// latency from the source; edgeGroups finds records' key groups per
	// input edge (nil: not recorded), perGroup and touched count a part's
	// records per group.
	groups     flow.GroupWaits
	srcGroups  flow.GroupWaits
	edgeGroups []plan.RecordGroups
	perGroup   []int
	touched    []int
}

// countSlot is one bucket's number and records.
type countSlot struct {
	bucket  int64
	records int64
}

// waitSlot is one bucket's number and its records' waits and latency from
// the source outside a rescale.
type waitSlot struct {
	bucket int64
	wait   flow.WaitHist
	src    flow.WaitHist
}

// count is the count slot of the bucket b, emptied if it held an older
// bucket.
func (f *taskFlow) count(b int64) *countSlot {
	s := &f.counts[b%flowCountSlots]
	if s.bucket != b {
		*s = countSlot{bucket: b}
	}
	return s
}

// wait is the wait slot of the bucket b, emptied if it held an older one.
func (f *taskFlow) wait(b int64) *waitSlot {
	s := &f.waits[b%flowWaitSlots]
	if s.bucket != b {
		*s = waitSlot{bucket: b}
	}
	return s
}

// flow is the task's record, made on first use.
func (t *task) flow() *taskFlow {
	if t.flowRec == nil {
		t.flowRec = &taskFlow{}
	}
	return t.flowRec
}

// flowProcessed notes that records recs of buffer b, from input edge
// edge, were handed to the operator at now.
func (t *task) flowProcessed(now time.Time, b *Buffer, recs plan.Batch, edge int) {
	f := t.flow()
	n := recs.Len()
	f.count(flow.BucketOf(now)).records += int64(n)
	if b.arrived.IsZero() {
		return // restored channel state: it arrived in an earlier run
	}
	wait := now.Sub(b.arrived)
	src := time.Duration(-1) // not known
	if !b.origin.IsZero() {
		src = max(0, now.Sub(b.origin))
	}
	if t.rs == nil {
		s := f.wait(flow.BucketOf(now))
		s.wait.Add(wait, n)
		if src >= 0 {
			s.src.Add(src, n)
		}
		t.flowByGroup(now, recs, edge, wait, src)
		return
	}
	t.flowUnder(now)
	moved := min(n, b.moved)
	f.moved.Add(wait, moved)
	f.unmoved.Add(wait, n-moved)
	if src >= 0 {
		f.srcMoved.Add(src, moved)
		f.srcUnmoved.Add(src, n-moved)
	}
	b.moved -= moved
}

// flowByGroup adds recs, which waited wait and are src from their source
// (negative: not known), to the task's figures per key group (a keyed
// operator's, on an input whose records have key groups).
func (t *task) flowByGroup(now time.Time, recs plan.Batch, edge int, wait, src time.Duration) {
	f := t.flow()
	if f.edgeGroups == nil {
		f.edgeGroups = make([]plan.RecordGroups, len(t.op.Inputs))
		for e, in := range t.op.Inputs {
			if t.op.Keyed && in.Groups != nil {
				f.edgeGroups[e], _ = in.Groups(t.job.Plan.MaxParallelism) // nil on error: not recorded
			}
		}
		f.perGroup = make([]int, t.job.Plan.MaxParallelism)
	}
	rg := f.edgeGroups[edge]
	if rg == nil {
		return
	}
	touched := f.touched[:0]
	for k := range recs.Len() {
		g, err := rg.Group(recs, k)
		if err != nil || g < 0 || g >= len(f.perGroup) {
			continue // routing checks report it; the figures skip it
		}
		if f.perGroup[g] == 0 {
			touched = append(touched, g)
		}
		f.perGroup[g]++
	}
	for _, g := range touched {
		f.groups.Add(now, g, wait, f.perGroup[g])
		if src >= 0 {
			f.srcGroups.Add(now, g, src, f.perGroup[g])
		}
		f.perGroup[g] = 0
	}
	f.touched = touched
}

// flowReleased notes that the operator processed at now the records held
// for a moving key group (held) and those that came with its state
// (carried: their wait is from their delivery to the group's old owner).
func (t *task) flowReleased(now time.Time, held, carried []heldBatch) {
	f := t.flow()
	s := f.count(flow.BucketOf(now))
	t.flowUnder(now)
	for _, hb := range slices.Concat(held, carried) {
		n := hb.recs.Len()
		s.records += int64(n)
		if !hb.at.IsZero() {
			f.moved.Add(now.Sub(hb.at), n)
		}
		if !hb.origin.IsZero() {
			f.srcMoved.Add(max(0, now.Sub(hb.origin)), n)
		}
	}
}

// flowUnder starts, at the first record under the running rescale, its
// waits.
func (t *task) flowUnder(now time.Time) {
	cfg := t.rs.m.Config()
	t.flow().under(now, cfg.Rescale, slices.Concat(cfg.Out, cfg.In))
}

// under starts the waits of rescale seq, which moves moves, at now (once):
// what the instance measured in the flow.BeforeWindow before it is kept.
func (f *taskFlow) under(now time.Time, seq uint64, moves []keygroups.Move) {
	if f.seq == seq {
		return
	}
	f.seq, f.began, f.beganAt = seq, flow.BucketOf(now), now
	f.moved, f.unmoved = flow.WaitHist{}, flow.WaitHist{}
	f.before, f.srcBefore = flow.WaitHist{}, flow.WaitHist{}
	for b := f.began - int64(flow.BeforeWindow/flow.Bucket); b < f.began; b++ {
		if s := &f.waits[b%flowWaitSlots]; s.bucket == b {
			f.before.Merge(s.wait)
			f.srcBefore.Merge(s.src)
		}
	}
	f.srcMoved, f.srcUnmoved = flow.WaitHist{}, flow.WaitHist{}
	f.moving = map[int]bool{}
	for _, m := range moves {
		f.moving[m.Group] = true
	}
}

// flowMovedKept counts the records of buffer b, whose key groups are of,
// that the task processes (neither held nor dropped by d) and whose group
// moves.
func (t *task) flowMovedKept(of []int, d rescale.Decision) int {
	t.flowUnder(time.Now())
	moving := t.flow().moving
	n := 0
	for _, g := range of {
		if moving[g] && !slices.Contains(d.Hold, g) && !slices.Contains(d.Drop, g) {
			n++
		}
	}
	return n
}

// flowResult is r with what the task measured up to now.
func (t *task) flowResult(r rescale.TaskResult) rescale.TaskResult {
	now := time.Now()
	if t.rs != nil {
		t.flowUnder(now) // an instance that processed no record under it yet
	}
	r.Flow = t.flow().task(now, t.rs != nil && t.rs.m.Config().Removed)
	return r
}

// task is what the instance measured up to now; ends: it ends with its
// part.
func (f *taskFlow) task(now time.Time, ends bool) *flow.Task {
	last := flow.BucketOf(now)
	first := last - flowCountSlots + 1
	tf := &flow.Task{Moved: f.moved, Unmoved: f.unmoved, Ends: ends}
	tf.FromSource.Moved, tf.FromSource.Unmoved = f.srcMoved, f.srcUnmoved
	if f.seq != 0 {
		moving := func(g int) bool { return f.moving[g] }
		tf.Before, tf.FromSource.Before = f.before, f.srcBefore
		tf.BeforeMoved, tf.BeforeUnmoved = f.groups.Before(f.beganAt, moving)
		tf.FromSource.BeforeMoved, tf.FromSource.BeforeUnmoved = f.srcGroups.Before(f.beganAt, moving)
	}
	for b := first; b <= last; b++ {
		s := &f.counts[b%flowCountSlots]
		n := int64(0)
		if s.bucket == b {
			n = s.records
		}
		if n == 0 && len(tf.Records) == 0 {
			continue // from the first bucket with records
		}
		if len(tf.Records) == 0 {
			tf.First = b
		}
		tf.Records = append(tf.Records, n)
	}
	if len(tf.Records) == 0 {
		tf.First = last
		tf.Records = []int64{0}
	}
	return tf
}

// deliveredAt is when b was delivered to the task, or, for a buffer the
// rescale barrier overtook in its channel, now: the moment the rescale takes
// its records.
func deliveredAt(b *Buffer) time.Time {
	if b.arrived.IsZero() {
		return time.Now()
	}
	return b.arrived
}

// unixNanoOf is t in Unix ns (0 for the zero time).
func unixNanoOf(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// timeOfUnixNano is the time of Unix ns ns (the zero time for 0).
func timeOfUnixNano(ns int64) time.Time {
	if ns == 0 {
		return time.Time{}
	}
	return time.Unix(0, ns)
}
