package store

import (
	"bytes"
	"context"
	"errors"
	"io"
)

// errCopyEnded is what the stream to a Mirror's local copy gets once the
// copy stopped taking bytes (it failed).
var errCopyEnded = errors.New("local copy ended")

// PutBlobStream implements BlobStreamer: the stream goes to the primary and,
// as it goes, to the local copy. As with PutBlob the primary's write
// decides; a local copy that fails is dropped (nothing of it is left) and
// logged. A primary that does not take streams gets the blob whole.
func (m *Mirror) PutBlobStream(ctx context.Context, job string, ckpt uint64, name string, write func(w io.Writer) error) (BlobRef, error) {
	ps, ok := m.Primary.(BlobStreamer)
	if !ok {
		var buf bytes.Buffer
		if err := write(&buf); err != nil {
			return BlobRef{}, putBlobErr(job, ckpt, name, err)
		}
		return m.PutBlob(ctx, job, ckpt, name, buf.Bytes())
	}
	pr, pw := io.Pipe()
	copied := make(chan error, 1)
	go func() {
		_, err := m.Local.PutBlobStream(ctx, job, ckpt, name, func(w io.Writer) error {
			_, err := io.Copy(w, pr)
			return err
		})
		pr.CloseWithError(errCopyEnded) // the tee's later writes fail: it drops the copy
		copied <- err
	}()
	ref, err := ps.PutBlobStream(ctx, job, ckpt, name, func(w io.Writer) error {
		return write(&copyTee{primary: w, copy: pw})
	})
	pw.CloseWithError(err) // nil: the copy is whole; else it fails and leaves nothing
	copyErr := <-copied
	if err != nil {
		return ref, err
	}
	if copyErr != nil {
		m.Log.Warn().Err(copyErr).Str("job", job).Uint64("checkpoint", ckpt).Str("blob", name).Msg("keep local copy of blob")
	}
	return ref, nil
}

// copyTee writes to the primary and then to the local copy, until the copy
// fails; only the primary's errors are the writer's.
type copyTee struct {
	primary io.Writer
	copy    io.Writer
	dropped bool
}

func (t *copyTee) Write(p []byte) (int, error) {
	n, err := t.primary.Write(p)
	if err != nil {
		return n, err
	}
	if !t.dropped {
		if _, err := t.copy.Write(p[:n]); err != nil {
			t.dropped = true
		}
	}
	return n, nil
}
