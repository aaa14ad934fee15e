package cli

import (
	"maps"
	"testing"
)

// node submit forwards --operator-parallelism as its String; every node
// must read back the same entries.
func TestOperatorParallelismRoundTrips(t *testing.T) {
	o := operatorParallelism{}
	if err := o.Set("sink=1, count=3"); err != nil {
		t.Fatal(err)
	}
	if err := o.Set("mine=5"); err != nil {
		t.Fatal(err)
	}
	if got := o.String(); got != "count=3,mine=5,sink=1" {
		t.Fatalf("String() = %q", got)
	}
	back := operatorParallelism{}
	if err := back.Set(o.String()); err != nil || !maps.Equal(back, o) {
		t.Fatalf("Set(%q) = %v, %v; want %v", o.String(), back, err, o)
	}
}
