package node

import (
	"reflect"
	"testing"

	"github.com/weirstream/weir/cluster/placement"
	"github.com/weirstream/weir/store"
)

// TestStoredState: what a checkpoint stores per operator, counted as the
// local copies' index counts it: key groups whole or as a chain, operator
// state, and only the channel state the checkpoint wrote itself (a channel
// whose buffers are all parts of earlier blobs has no section of its own).
func TestStoredState(t *testing.T) {
	if got := storedState(nil); got != nil {
		t.Fatalf("storedState(nil) = %v, want nil", got)
	}
	ref := func(size int64) store.BlobRef { return store.BlobRef{Name: "b", Size: size} }
	m := &store.Manifest{Tasks: []store.TaskSnapshot{
		{Operator: "src", Instance: 0, OperatorState: &store.BlobRef{Name: "o", Size: 7}},
		{Operator: "count", Instance: 0, KeyGroups: map[int]store.BlobRef{3: ref(10), 1: ref(10)},
			Channels: []store.ChannelBlob{{Input: 0, Blob: ref(100)}, {Input: 1}}},
		{Operator: "count", Instance: 1, KeyGroupChains: map[int][]store.ChainLink{2: {{Checkpoint: 4, Ref: ref(5)}}},
			Channels: []store.ChannelBlob{{Input: 0, Blob: ref(20)}}},
		{Operator: "sink", Instance: 0},
	}}
	want := map[string]placement.Stored{
		"src":   {OtherBytes: 7},
		"count": {KeyGroups: []int{1, 2, 3}, OtherBytes: 120},
		"sink":  {},
	}
	if got := storedState(m); !reflect.DeepEqual(got, want) {
		t.Fatalf("storedState = %+v, want %+v", got, want)
	}
}
