package flow

import (
	"testing"
	"time"
)

// TestEarliestAndAges: an unknown origin yields to a known one; a buffer's
// age goes over the wire and back to an origin on the receiver's clock, so
// a buffer 30 ms old when sent by a node whose clock is an hour ahead is
// 30 ms old on arrival plus what it waits on the receiver, whatever the
// clocks say; an unknown origin stays unknown.
func TestEarliestAndAges(t *testing.T) {
	t0 := time.Unix(1000, 0)
	t1 := t0.Add(time.Millisecond)
	for _, tc := range []struct{ a, b, want time.Time }{
		{time.Time{}, time.Time{}, time.Time{}}, {t0, time.Time{}, t0}, {time.Time{}, t1, t1}, {t0, t1, t0}, {t1, t0, t0},
	} {
		if got := Earliest(tc.a, tc.b); !got.Equal(tc.want) {
			t.Errorf("Earliest(%v, %v) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
	sender := t0.Add(time.Hour) // the sending node's clock
	origin := sender.Add(-30 * time.Millisecond)
	age := AgeAt(origin, sender)
	if age != int64(30*time.Millisecond) {
		t.Fatalf("age %d ns, want 30 ms", age)
	}
	received := t0 // the receiving node's clock, an hour behind
	back := OriginOf(age, received)
	if got := received.Add(5 * time.Millisecond).Sub(back); got != 35*time.Millisecond {
		t.Fatalf("5 ms after arrival the buffer is %v old, want 35 ms", got)
	}
	if AgeAt(time.Time{}, sender) != 0 || !OriginOf(0, received).IsZero() {
		t.Fatal("an unknown origin does not stay unknown over the wire")
	}
	if AgeAt(sender.Add(time.Millisecond), sender) != 1 {
		t.Fatal("a known origin ahead of now must keep a known age (1 ns)")
	}
}

// TestOpenOrigins scripts one output channel through calls of several
// origins: a batch's origin is the earliest of the calls that wrote into
// it, seen by its pending records or by a batch sealed during the call;
// calls that wrote nothing to the channel leave it alone; a flush outside
// a call seals with what the batch had; records written outside a call add
// no origin.
func TestOpenOrigins(t *testing.T) {
	at := func(ms int) time.Time { return time.Unix(1000, 0).Add(time.Duration(ms) * time.Millisecond) }
	type step struct {
		op      string // begin, seal, end
		origin  int    // begin: the call's origin (ms; -1 unknown)
		pending int    // begin, end: the open batch's records
		want    int    // seal: the sealed batch's origin (ms; -1 unknown)
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"one call fills part of a batch, a flush seals it", []step{
			{op: "begin", origin: 10, pending: 0}, {op: "end", pending: 3}, {op: "seal", want: 10}}},
		{"a later call of an earlier origin lowers it", []step{
			{op: "begin", origin: 10}, {op: "end", pending: 3},
			{op: "begin", origin: 4, pending: 3}, {op: "end", pending: 5}, {op: "seal", want: 4}}},
		{"a call that wrote nothing to the channel leaves it alone", []step{
			{op: "begin", origin: 10}, {op: "end", pending: 3},
			{op: "begin", origin: 4, pending: 3}, {op: "end", pending: 3}, {op: "seal", want: 10}}},
		{"a batch full during a call has the call's origin and the batch's", []step{
			{op: "begin", origin: 10}, {op: "end", pending: 3},
			{op: "begin", origin: 20, pending: 3}, {op: "seal", want: 10}, {op: "end", pending: 2}, {op: "seal", want: 20}}},
		{"a call that filled batches exactly leaves none open", []step{
			{op: "begin", origin: 20}, {op: "seal", want: 20}, {op: "seal", want: 20}, {op: "end", pending: 0},
			{op: "begin", origin: 30}, {op: "end", pending: 1}, {op: "seal", want: 30}}},
		{"after a seal a call with as many pending as at its begin wrote them all", []step{
			{op: "begin", origin: 10}, {op: "end", pending: 3},
			{op: "begin", origin: 20, pending: 3}, {op: "seal", want: 10}, {op: "end", pending: 3}, {op: "seal", want: 20}}},
		{"unknown origins add nothing", []step{
			{op: "begin", origin: -1}, {op: "end", pending: 2}, {op: "seal", want: -1},
			{op: "begin", origin: -1}, {op: "end", pending: 2},
			{op: "begin", origin: 7, pending: 2}, {op: "end", pending: 4}, {op: "seal", want: 7}}},
		{"a flush outside a call takes nothing of the last call", []step{
			{op: "begin", origin: 10}, {op: "end", pending: 0}, {op: "seal", want: -1}}},
	} {
		var o Open
		for i, s := range tc.steps {
			origin := time.Time{}
			if s.origin >= 0 && s.op == "begin" {
				origin = at(s.origin)
			}
			switch s.op {
			case "begin":
				o.Begin(origin, s.pending)
			case "end":
				o.End(s.pending)
			case "seal":
				want := time.Time{}
				if s.want >= 0 {
					want = at(s.want)
				}
				if got := o.Sealed(); !got.Equal(want) {
					t.Errorf("%s: step %d: sealed with origin %v, want %v", tc.name, i, got, want)
				}
			}
		}
	}
}

// BenchmarkOpenCall is a producer's origin bookkeeping around one call on
// an edge of 4 channels (Begin and End on each), the cost the runtime adds
// per part of an input buffer; it must not allocate.
func BenchmarkOpenCall(b *testing.B) {
	var chans [4]Open
	now := time.Unix(1000, 0)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		for c := range chans {
			chans[c].Begin(now, i&7)
		}
		for c := range chans {
			chans[c].End(i&7 + c&1)
		}
	}
}
