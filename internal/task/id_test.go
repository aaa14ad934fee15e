package task

import "testing"

func TestIDStringAndOrder(t *testing.T) {
	a, b, c := ID{"src", 0, 1}, ID{"src", 0, 2}, ID{"count", 1, 0}
	if got := a.String(); got != "src[1]" {
		t.Fatalf("String() = %q, want src[1]", got)
	}
	if !a.Less(b) || b.Less(a) || !b.Less(c) || c.Less(a) || a.Less(a) {
		t.Fatalf("Less does not order by operator index, then instance: %v %v %v", a, b, c)
	}
}
