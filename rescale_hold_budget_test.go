package weir_test

import "testing"

// TestLiveRescaleUnmovedGroupsFlowWhileMovedGroupIsHeld rescales count 2 → 3
// while the handoff of a key group that moves is held in its encoding and
// every other record is of that group: its new owner holds them, far more
// than a channel's worth of buffers, below the hold budget (64 MiB), so no
// input pauses and the old owner goes on counting its groups that stay.
// Before, the hold limit was 8 buffers per input: the new owner's input
// from the source paused, the source waited for its credit, and every
// group stopped.
func TestLiveRescaleUnmovedGroupsFlowWhileMovedGroupIsHeld(t *testing.T) {
	heldHandoff(t, 2, 3, false, true)
}
