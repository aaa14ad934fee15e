package transport

import (
	"slices"
	"testing"
)

func TestEndpointNode(t *testing.T) {
	for in, want := range map[string]string{
		"n1/node/job-keycount/source-0": "n1",
		"n2#events":                     "n2",
		"n3/node/job-x#data":            "n3",
		"n4":                            "n4",
		"":                              "",
	} {
		if got := EndpointNode(in); got != want {
			t.Errorf("EndpointNode(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestLinkCounters counts messages and bytes per direction and node pair
// and lists them sorted.
func TestLinkCounters(t *testing.T) {
	var l LinkCounters
	l.Add(Sent, "n1", "n2", 100)
	l.Add(Sent, "n1", "n2", 50)
	l.Add(Received, "n2", "n1", 7)
	l.Add(Sent, "n1", "n3", 1)
	got := l.Snapshot()
	want := []LinkValue{
		{Direction: Received, From: "n2", To: "n1", Messages: 1, Bytes: 7},
		{Direction: Sent, From: "n1", To: "n2", Messages: 2, Bytes: 150},
		{Direction: Sent, From: "n1", To: "n3", Messages: 1, Bytes: 1},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("snapshot %+v, want %+v", got, want)
	}
	var none *LinkCounters
	none.Add(Sent, "a", "b", 1) // a nil counter counts nothing and does not panic
}
