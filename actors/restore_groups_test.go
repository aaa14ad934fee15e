package actors

import (
	"errors"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/internal/poll"
)

// heldStager is a plan.RestoreStager that records the key groups it
// decodes (by StageRestore or RestoreState) and commits, and whose first
// decode waits until release is closed.
type heldStager struct {
	release chan struct{}
	first   sync.Once
	mu      sync.Mutex
	decoded [][]int
	// committed is written by Commit and RestoreState, on the batch's
	// caller.
	committed []int
	failAt    int // the key group whose decode fails (-1: none)
}

func (h *heldStager) decode(s plan.Snapshot) ([]int, error) {
	h.first.Do(func() { <-h.release })
	groups := slices.Sorted(maps.Keys(s.KeyGroups))
	h.mu.Lock()
	h.decoded = append(h.decoded, groups)
	h.mu.Unlock()
	if slices.Contains(groups, h.failAt) {
		return nil, errors.New("bad section")
	}
	return groups, nil
}

func (h *heldStager) SnapshotState(uint64) (plan.Snapshot, error) { return plan.Snapshot{}, nil }

func (h *heldStager) RestoreState(s plan.Snapshot) error {
	groups, err := h.decode(s)
	h.committed = append(h.committed, groups...)
	return err
}

func (h *heldStager) StageRestore(s plan.Snapshot) (plan.StagedGroups, error) {
	groups, err := h.decode(s)
	if err != nil {
		return nil, err
	}
	return stagedFunc(func() error { h.committed = append(h.committed, groups...); return nil }), nil
}

// stagedFunc is plan.StagedGroups as its Commit.
type stagedFunc func() error

func (f stagedFunc) Commit() error { return f() }

// TestGroupBatchReadsOnWhileABatchDecodes holds the decoding of the first
// batch of key-group sections and requires the sections of the next batch
// to be taken meanwhile (reading overlaps decoding); every group is then
// committed once, in the order read, on the caller's goroutine.
func TestGroupBatchReadsOnWhileABatchDecodes(t *testing.T) {
	h := &heldStager{release: make(chan struct{}), failAt: -1}
	b := newGroupBatch(h, 7)
	b.size = 2
	read := make(chan int, 8) // the groups add took
	errc := make(chan error, 1)
	go func() {
		for g := range 5 {
			if err := b.add(g, []byte{byte(g)}, 0); err != nil {
				errc <- err
				return
			}
			read <- g
		}
		errc <- nil
	}()
	// Groups 0 and 1 fill the first batch, whose decode is held; group 2
	// is read while it is.
	var took []int
	if !poll.Until(30*time.Second, time.Millisecond, func() bool {
		for {
			select {
			case g := <-read:
				took = append(took, g)
			default:
				return slices.Contains(took, 2)
			}
		}
	}) {
		close(h.release)
		t.Fatalf("sections read while the first batch decodes: %v, want group 2 read too", took)
	}
	if len(h.committed) != 0 {
		t.Errorf("committed %v while the first batch is held", h.committed)
	}
	close(h.release)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if err := b.flush(); err != nil {
		t.Fatal(err)
	}
	b.discard()
	if want := []int{0, 1, 2, 3, 4}; !slices.Equal(h.committed, want) {
		t.Errorf("committed %v, want %v", h.committed, want)
	}
}

// TestGroupBatchFailedDecodeCommitsNothingAfter: a batch that fails to
// decode is the restore's error, its groups are not installed, and a batch
// decoding when the restore gives up is waited for and dropped.
func TestGroupBatchFailedDecodeCommitsNothingAfter(t *testing.T) {
	h := &heldStager{release: make(chan struct{}), failAt: 1}
	close(h.release)
	b := newGroupBatch(h, 7)
	b.size = 2
	var err error
	for g := range 6 {
		if err = b.add(g, []byte{byte(g)}, 0); err != nil {
			break
		}
	}
	if err == nil {
		err = b.flush()
	}
	b.discard()
	if err == nil {
		t.Fatal("restore of a bad section succeeded")
	}
	if slices.Contains(h.committed, 1) || slices.Contains(h.committed, 0) {
		t.Errorf("committed %v: the failed batch {0, 1} installed", h.committed)
	}
	if b.inFlight {
		t.Error("a batch is still decoding after discard")
	}
}
