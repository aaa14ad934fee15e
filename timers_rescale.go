package weir

import (
	"fmt"

	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/state"
)

// ExportGroups hands key groups off in a live rescale (plan.GroupMover):
// their keyed state and timers, and the watermark each had here (the new
// owner treats records at or before it as late, as this one did; a held
// group carries the watermark it was held at).
func (t *timedInstance[K, Out]) ExportGroups(groups []int) (map[int][]byte, error) {
	mover, ok := t.keyed.(plan.GroupMover)
	if !ok {
		return nil, fmt.Errorf("operator %q: keyed instance %T cannot hand key groups off", t.name, t.keyed)
	}
	blobs := map[int][]byte{}
	for _, g := range groups {
		if w, held := t.scope.moved[g]; held {
			t.scope.table.SetWatermark(w)
		}
		b, err := mover.ExportGroups([]int{g})
		t.scope.table.SetWatermark(t.scope.wm)
		if err != nil {
			return nil, err
		}
		for k, v := range b {
			blobs[k] = v
		}
		delete(t.scope.moved, g)
	}
	t.scope.table.Disown(groups)
	return blobs, nil
}

// HoldGroups keeps the watermark key groups have now while a live rescale
// moves them away (plan.GroupReleaser): marks this instance takes after a
// producer switched follow records of them that go to the new owner, and
// records of them set aside (overtaken by the rescale barrier) are processed
// there, so those marks must not fire their timers here or make their
// records late.
func (t *timedInstance[K, Out]) HoldGroups(groups []int) {
	if t.scope.moved == nil {
		t.scope.moved = map[int]int64{}
	}
	for _, g := range groups {
		if _, held := t.scope.moved[g]; !held {
			t.scope.moved[g] = max(t.scope.wm, t.scope.table.Floor(g))
		}
	}
}

// ImportGroups takes key groups handed off by another instance
// (plan.GroupMover): their state and timers; the timers fire with this
// instance's watermark from now on.
func (t *timedInstance[K, Out]) ImportGroups(groups []int, blobs map[int][]byte) error {
	mover, ok := t.keyed.(plan.GroupMover)
	if !ok {
		return fmt.Errorf("operator %q: keyed instance %T cannot take key groups", t.name, t.keyed)
	}
	// An added instance owns its incoming groups from its start: they hold
	// nothing but its watermark until their state comes.
	t.scope.table.Disown(groups)
	if err := mover.ImportGroups(groups, blobs); err != nil {
		return err
	}
	t.scope.table.Own(groups)
	if t.scope.moved == nil {
		t.scope.moved = map[int]int64{}
	}
	for _, g := range groups {
		t.scope.moved[g] = t.scope.table.Floor(g) // the old owner's watermark
	}
	return nil
}

// ReleaseGroups ends the wait of key groups moved here (plan.GroupReleaser):
// the records that came with them and those held for them are processed, so
// they take this instance's watermark, and their timers due by it fire.
func (t *timedInstance[K, Out]) ReleaseGroups(groups []int, out plan.Output) error {
	for _, g := range groups {
		delete(t.scope.moved, g)
	}
	em := t.keyed.emitter()
	em.bind(out)
	return t.fire(state.EventTime, t.scope.wm, em)
}
