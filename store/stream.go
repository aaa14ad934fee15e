package store

import (
	"context"
	"hash/crc32"
	"io"
)

// BlobStreamer is a Store that can take a blob as it is produced instead of
// whole: a task streams a large checkpoint into it a key group at a time
// rather than laying the whole state out in memory first.
type BlobStreamer interface {
	// PutBlobStream stores what write writes as blob name of checkpoint ckpt
	// of job, durably and atomically as PutBlob: when write or the store
	// fails, nothing is left under that name, and the error wraps write's.
	// The ref is what PutBlob of the same bytes returns. A store that
	// wraps one by embedding it takes streams past its own PutBlob unless
	// it wraps PutBlobStream too.
	PutBlobStream(ctx context.Context, job string, ckpt uint64, name string, write func(w io.Writer) error) (BlobRef, error)
}

// blobTally counts, and unless the blob is Sectioned checksums, what a
// streamed blob's producer writes through it, to make its ref.
type blobTally struct {
	w    io.Writer
	sum  bool
	size int64
	crc  uint32
}

func (t *blobTally) Write(p []byte) (int, error) {
	n, err := t.w.Write(p)
	if t.sum {
		t.crc = crc32.Update(t.crc, castagnoli, p[:n])
	}
	t.size += int64(n)
	return n, err
}

// ref is the ref of the blob written through t, stored under name.
func (t *blobTally) ref(name string) BlobRef {
	r := BlobRef{Name: name, Size: t.size}
	if t.sum {
		r.CRC32C = t.crc
	}
	return r
}

// newBlobTally tallies writes to w for a PutBlobStream with ctx.
func newBlobTally(ctx context.Context, w io.Writer) *blobTally {
	return &blobTally{w: w, sum: ctx.Value(sectionedKey{}) == nil}
}
