package state

import (
	"bytes"
	"cmp"
	"container/heap"
	"fmt"
	"math"
	"slices"

	"github.com/vmihailenco/msgpack/v5/msgpcode"
)

// TimeDomain says which clock a timer follows.
type TimeDomain uint8

const (
	// EventTime timers fire when the watermark reaches them.
	EventTime TimeDomain = 0
	// ProcessingTime timers fire when the wall clock reaches them.
	ProcessingTime TimeDomain = 1
)

// noWatermark is a key group's watermark before one was recorded.
const noWatermark = math.MinInt64

// Timer is one registered timer: a time (Unix nanoseconds) in a domain, for
// a key (canonical key bytes) of a key group.
type Timer struct {
	At     int64
	Domain TimeDomain
	Group  int
	Key    string
}

// timerID is a timer's identity within its key group.
type timerID struct {
	at     int64
	domain TimeDomain
	key    string
}

// TimerTable holds a keyed operator's timers per key group, and the
// operator's watermark in every key group it owns, so both are snapshotted,
// restored and moved with their key group. Timers come out in time order
// (ties by key group, then key) through PopDue. It is not safe for
// concurrent use.
//
// Snapshot of key group g, msgpack: [watermark (int64, or nil), [[at,
// domain, key], ...] sorted].
type TimerTable struct {
	name    string
	groups  []map[timerID]struct{}
	owned   []bool
	floors  []int64 // the watermark each key group was restored with
	wm      int64   // the operator's watermark, written into owned groups
	live    int
	heaps   [2]timerHeap // by domain; lazily deleted: an entry counts only while its group's map has it
	scratch []timerID
	eb      encBuf
}

// NewTimerTable returns an empty timer table for maxParallelism key groups.
func NewTimerTable(name string, maxParallelism int) *TimerTable {
	if maxParallelism < 1 {
		panic(fmt.Sprintf("state: timer table %q: maxParallelism %d < 1", name, maxParallelism))
	}
	t := &TimerTable{name: name, groups: make([]map[timerID]struct{}, maxParallelism),
		owned: make([]bool, maxParallelism), floors: make([]int64, maxParallelism), wm: noWatermark}
	for g := range t.floors {
		t.floors[g] = noWatermark
	}
	return t
}

// Own marks the key groups the operator instance owns: they carry its
// watermark in snapshots.
func (t *TimerTable) Own(groups []int) {
	for _, g := range groups {
		t.owned[g] = true
	}
}

// SetWatermark records the operator's current watermark.
func (t *TimerTable) SetWatermark(wm int64) { t.wm = wm }

// Floor is the watermark key group g was restored with (math.MinInt64 if
// none): records of the group at or before it were late before the restore.
func (t *TimerTable) Floor(g int) int64 { return t.floors[g] }

// RestoredWatermark is the lowest watermark the owned key groups were
// restored with; math.MinInt64 when any owned group had none.
func (t *TimerTable) RestoredWatermark() int64 {
	low, any := int64(math.MaxInt64), false
	for g, own := range t.owned {
		if own {
			any = true
			low = min(low, t.floors[g])
		}
	}
	if !any {
		return noWatermark
	}
	return low
}

// Register adds a timer; registering one that exists changes nothing.
func (t *TimerTable) Register(tm Timer) {
	m := t.groups[tm.Group]
	if m == nil {
		m = make(map[timerID]struct{})
		t.groups[tm.Group] = m
	}
	id := timerID{at: tm.At, domain: tm.Domain, key: tm.Key}
	if _, ok := m[id]; ok {
		return
	}
	m[id] = struct{}{}
	t.live++
	heap.Push(&t.heaps[tm.Domain], tm)
	t.compact()
}

// Delete removes a timer if it is registered.
func (t *TimerTable) Delete(tm Timer) {
	m := t.groups[tm.Group]
	id := timerID{at: tm.At, domain: tm.Domain, key: tm.Key}
	if _, ok := m[id]; ok {
		delete(m, id)
		t.live--
	}
}

// PopDue removes and returns the earliest timer of domain d at or before
// upTo; ok is false when none is due.
func (t *TimerTable) PopDue(d TimeDomain, upTo int64) (tm Timer, ok bool) {
	h := &t.heaps[d]
	for h.Len() > 0 {
		top := (*h)[0]
		id := timerID{at: top.At, domain: top.Domain, key: top.Key}
		if _, live := t.groups[top.Group][id]; !live {
			heap.Pop(h) // deleted, dropped or fired already
			continue
		}
		if top.At > upTo {
			return Timer{}, false
		}
		heap.Pop(h)
		delete(t.groups[top.Group], id)
		t.live--
		return top, true
	}
	return Timer{}, false
}

// compact rebuilds the heaps when deleted entries outnumber live ones.
func (t *TimerTable) compact() {
	if t.heaps[0].Len()+t.heaps[1].Len() <= 2*t.live+64 {
		return
	}
	t.heaps[0], t.heaps[1] = t.heaps[0][:0], t.heaps[1][:0]
	for g, m := range t.groups {
		for id := range m {
			t.heaps[id.domain] = append(t.heaps[id.domain], Timer{At: id.at, Domain: id.domain, Group: g, Key: id.key})
		}
	}
	heap.Init(&t.heaps[0])
	heap.Init(&t.heaps[1])
}

// Name is the table's name.
func (t *TimerTable) Name() string { return t.name }

// Kind is KindTimers.
func (t *TimerTable) Kind() Kind { return KindTimers }

// MaxParallelism is the number of key groups.
func (t *TimerTable) MaxParallelism() int { return len(t.groups) }

// Len counts key group g's timers, plus one for the watermark an owned group
// carries once the operator has one.
func (t *TimerTable) Len(g int) int {
	n := len(t.groups[g])
	if t.owned[g] && t.wm != noWatermark {
		n++
	}
	return n
}

// DropGroup removes key group g's timers and its restored watermark.
func (t *TimerTable) DropGroup(g int) {
	t.live -= len(t.groups[g])
	t.groups[g] = nil
	t.floors[g] = noWatermark
}

// SnapshotGroup encodes key group g; nil when it holds nothing.
func (t *TimerTable) SnapshotGroup(g int) ([]byte, error) {
	if g < 0 || g >= len(t.groups) {
		return nil, fmt.Errorf("state: snapshot timer table %q key group %d: %w", t.name, g, ErrGroupRange)
	}
	if t.Len(g) == 0 {
		return nil, nil
	}
	ids := t.scratch[:0]
	for id := range t.groups[g] {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, compareTimerIDs)
	defer func() { clear(ids); t.scratch = ids[:0] }()
	e := t.eb.reset()
	err := e.EncodeArrayLen(2)
	if err == nil {
		if t.owned[g] && t.wm != noWatermark {
			err = e.EncodeInt(t.wm)
		} else {
			err = e.EncodeNil()
		}
	}
	if err == nil {
		err = e.EncodeArrayLen(len(ids))
	}
	for _, id := range ids {
		if err != nil {
			break
		}
		if err = e.EncodeArrayLen(3); err == nil {
			if err = e.EncodeInt(id.at); err == nil {
				if err = e.EncodeUint(uint64(id.domain)); err == nil {
					err = e.EncodeString(id.key)
				}
			}
		}
	}
	if err != nil {
		return nil, fmt.Errorf("state: snapshot timer table %q key group %d: %w", t.name, g, err)
	}
	return t.eb.bytes(), nil
}

func compareTimerIDs(a, b timerID) int {
	return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.domain, b.domain), cmp.Compare(a.key, b.key))
}

// RestoreGroup replaces key group g with the snapshot data.
func (t *TimerTable) RestoreGroup(g int, data []byte) error {
	commit, err := t.stageGroup(g, data, copyInput)
	if err != nil {
		return err
	}
	commit()
	return nil
}

// stageGroup decodes a snapshot of key group g; commit installs it. Timer
// keys are always copied: in does not matter.
func (t *TimerTable) stageGroup(g int, data []byte, _ keepInput) (func(), error) {
	if g < 0 || g >= len(t.groups) {
		return nil, fmt.Errorf("state: restore timer table %q key group %d: %w", t.name, g, ErrGroupRange)
	}
	bad := func(err error) error {
		return fmt.Errorf("state: restore timer table %q key group %d: %w: %w", t.name, g, ErrCorrupt, err)
	}
	floor := int64(noWatermark)
	ids := map[timerID]struct{}{}
	if len(data) > 0 {
		r := bytes.NewReader(data)
		d := decoder{Decoder: newDecoder(r), r: r}
		n, err := d.DecodeArrayLen()
		if err != nil || n != 2 {
			return nil, bad(fmt.Errorf("want a [watermark, timers] pair, got %d elements (%v)", n, err))
		}
		c, err := d.PeekCode()
		if err != nil {
			return nil, bad(err)
		}
		if c == msgpcode.Nil {
			err = d.DecodeNil()
		} else {
			floor, err = d.DecodeInt64()
		}
		if err != nil {
			return nil, bad(fmt.Errorf("watermark: %w", err))
		}
		count, err := d.DecodeArrayLen()
		if err != nil {
			return nil, bad(err)
		}
		if err := d.checkLen(count); err != nil {
			return nil, bad(err)
		}
		for range count {
			if n, err := d.DecodeArrayLen(); err != nil || n != 3 {
				return nil, bad(fmt.Errorf("timer: want [at, domain, key] (%v)", err))
			}
			at, err := d.DecodeInt64()
			if err != nil {
				return nil, bad(err)
			}
			dom, err := d.DecodeUint8()
			if err != nil {
				return nil, bad(err)
			}
			if TimeDomain(dom) > ProcessingTime {
				return nil, bad(fmt.Errorf("unknown time domain %d", dom))
			}
			key, err := d.DecodeString()
			if err != nil {
				return nil, bad(err)
			}
			ids[timerID{at: at, domain: TimeDomain(dom), key: key}] = struct{}{}
		}
		if r.Len() != 0 {
			return nil, bad(fmt.Errorf("%d bytes after the timers", r.Len()))
		}
	}
	return func() {
		t.DropGroup(g)
		t.floors[g] = floor
		if len(ids) > 0 {
			t.groups[g] = ids
		}
		t.live += len(ids)
		for id := range ids {
			heap.Push(&t.heaps[id.domain], Timer{At: id.at, Domain: id.domain, Group: g, Key: id.key})
		}
		t.compact()
	}, nil
}

// timerHeap orders timers by time, then key group, then key.
type timerHeap []Timer

func (h timerHeap) Len() int { return len(h) }
func (h timerHeap) Less(i, j int) bool {
	a, b := h[i], h[j]
	if a.At != b.At {
		return a.At < b.At
	}
	if a.Group != b.Group {
		return a.Group < b.Group
	}
	return a.Key < b.Key
}
func (h timerHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *timerHeap) Push(x any)   { *h = append(*h, x.(Timer)) }
func (h *timerHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

var _ stager = (*TimerTable)(nil)
