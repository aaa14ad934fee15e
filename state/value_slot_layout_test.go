package state

import (
	"testing"
	"unsafe"
)

// TestValueSlotOfA32ByteValueFitsACacheLine guards the layout the task's
// hot path relies on: a slot holding a 32-byte value (an int64 and a byte
// slice, as samples/bigstate keeps per key) with its claim and its change
// mark is at most 64 bytes, so the allocator's 64-byte size class keeps it
// in one cache line; one byte more and most slots straddle two.
func TestValueSlotOfA32ByteValueFitsACacheLine(t *testing.T) {
	if n := unsafe.Sizeof(snapEntry{}); n > 32 {
		t.Fatalf("snapEntry is %d bytes, the test wants a value of at most 32", n)
	}
	if n := unsafe.Sizeof(valueSlot[snapEntry]{}); n > 64 {
		t.Fatalf("a slot of a 32-byte value is %d bytes, more than a 64-byte cache line", n)
	}
}
