package flow

import "time"

// GroupSlot is the width of a slot of a GroupWaits.
const GroupSlot = BeforeWindow / 4

// groupSlots is how many slots a GroupWaits keeps: BeforeWindow and the
// slot in progress.
const groupSlots = int(BeforeWindow/GroupSlot) + 1

// GroupWaits is an instance's rolling record of the waits of the records it
// processed outside a rescale, per key group, in GroupSlot slots of wall
// time over the last BeforeWindow and the slot in progress. Which groups a
// rescale moves is known only once it is planned; then Before splits the
// waits before it by whether their group moves. The zero value is empty
// and ready.
type GroupWaits struct {
	slots [groupSlots]groupSlotWaits
}

// groupSlotWaits is one slot: its number (Unix time / GroupSlot) and the
// waits per key group.
type groupSlotWaits struct {
	n     int64
	hists map[int]*WaitHist
}

// slotOf is the number of the slot holding t.
func slotOf(t time.Time) int64 { return t.UnixNano() / int64(GroupSlot) }

// Add counts n records of group that waited d and were processed at now.
func (w *GroupWaits) Add(now time.Time, group int, d time.Duration, n int) {
	k := slotOf(now)
	s := &w.slots[k%int64(groupSlots)]
	if s.n != k || s.hists == nil {
		if s.hists == nil {
			s.hists = map[int]*WaitHist{}
		}
		clear(s.hists)
		s.n = k
	}
	h := s.hists[group]
	if h == nil {
		h = &WaitHist{}
		s.hists[group] = h
	}
	h.Add(d, n)
}

// Before is the waits of the records processed in the slot holding at and
// the BeforeWindow of slots before it (records after at are not added: they
// are under the rescale), split by whether moving says their group moves.
func (w *GroupWaits) Before(at time.Time, moving func(group int) bool) (moved, unmoved WaitHist) {
	last := slotOf(at)
	for i := range w.slots {
		s := &w.slots[i]
		if s.hists == nil || s.n > last || s.n <= last-int64(groupSlots) {
			continue
		}
		for g, h := range s.hists {
			if moving(g) {
				moved.Merge(*h)
			} else {
				unmoved.Merge(*h)
			}
		}
	}
	return moved, unmoved
}
