package actors

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/store"
)

// errNothingToStore ends a streamed blob that turned out empty: nothing is
// stored, as for a laid-out blob of no bytes.
var errNothingToStore = errors.New("nothing to store")

// storeCheckpoint encodes the task's part of checkpoint ck and stores it as
// blob name. When the store takes a stream and the snapshot can write one,
// the key groups go into the store as they are encoded, about a group at a
// time (the state is never laid out whole in memory); otherwise the blob is
// laid out first. The ref is zero when there was nothing to store.
func (t *task) storeCheckpoint(c context.Context, id uint64, name string, ck *taskCheckpoint) (*taskBlob, store.TaskSnapshot, checkpointStats, store.BlobRef, error) {
	t.job.Metrics.BlobsStoring.Add(1)
	defer t.job.Metrics.BlobsStoring.Add(-1)
	st := t.job.opts.Checkpoint.Store
	job := t.job.Plan.Name
	var blob *taskBlob
	var snap store.TaskSnapshot
	var stats checkpointStats
	if bs, ok := st.(store.BlobStreamer); ok && streams(ck) {
		ref, err := bs.PutBlobStream(store.Sectioned(c), job, id, name, func(w io.Writer) error {
			if err := t.encodeSnapshot(ck, w); err != nil {
				return err
			}
			var err error
			if blob, snap, stats, err = t.encodeCheckpoint(ck); err != nil {
				return err
			}
			if blob.end() == 0 {
				return errNothingToStore
			}
			_, err = w.Write(blob.bytes)
			return err
		})
		if errors.Is(err, errNothingToStore) {
			return blob, snap, stats, store.BlobRef{}, nil
		}
		return blob, snap, stats, ref, err
	}
	if err := t.encodeSnapshot(ck, nil); err != nil {
		return nil, snap, stats, store.BlobRef{}, err
	}
	blob, snap, stats, err := t.encodeCheckpoint(ck)
	if err != nil || blob.end() == 0 {
		return blob, snap, stats, store.BlobRef{}, err
	}
	ref, err := st.PutBlob(store.Sectioned(c), job, id, name, blob.bytes) // the manifest records its sections
	return blob, snap, stats, ref, err
}

// streams reports whether ck's snapshot can write its key groups to a
// stream.
func streams(ck *taskCheckpoint) bool {
	_, ok := ck.pending.(plan.StreamingPending)
	return ok
}

// encodeSnapshot encodes ck's asynchronous snapshot, if it has one, into
// ck.snap: its key groups written to w when w is not nil.
func (t *task) encodeSnapshot(ck *taskCheckpoint, w io.Writer) error {
	if ck.pending == nil {
		return nil
	}
	t.job.Metrics.SnapshotsEncoding.Add(1)
	snap, err := t.encodePending(ck, w)
	t.job.Metrics.SnapshotsEncoding.Add(-1)
	if mw, ok := ck.pending.(interface{ MaxWait() time.Duration }); ok {
		raise(&t.job.Metrics.MaxSnapshotWaitNs, int64(mw.MaxWait()))
	}
	if err != nil {
		return err
	}
	ck.snap = snap
	return nil
}
