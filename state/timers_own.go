package state

// Disown marks key groups the operator instance no longer owns (handed off
// by a live rescale, or about to be imported from another instance): they
// carry its watermark no more, so a snapshot of this instance has none of
// them once their timers are dropped.
func (t *TimerTable) Disown(groups []int) {
	for _, g := range groups {
		t.owned[g] = false
	}
}
