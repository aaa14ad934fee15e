package plan

// GroupReleaser is a GroupMover that learns when a key group moved to it by
// a live rescale is released: the records that came with the group's state
// and those held for it have been processed. Until then the group keeps the
// watermark of the instance it came from (records the old owner would have
// taken are not late here) and its event-time timers do not fire; at the
// release those due fire into out.
//
// HoldGroups is the old owner's side, called when its part in the rescale
// begins: groups about to leave keep the watermark they have now (before
// any producer switched) until they leave, since later marks follow records
// of them that go to the new owner, and records set aside for them are
// processed there.
type GroupReleaser interface {
	ReleaseGroups(groups []int, out Output) error
	HoldGroups(groups []int)
}
