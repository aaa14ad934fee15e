package store

import (
	"context"
	"fmt"
)

// SectionReader is a Store that reads many sections of a checkpoint's blobs
// fetching each stored object once (a task's key groups and channel state
// are sections of one blob).
type SectionReader interface {
	GetSections(ctx context.Context, job string, ckpt uint64, refs []BlobRef) ([][]byte, error)
}

// GetSections reads refs from st, each verified against its size and
// checksum, fetching each object once when st is a SectionReader. A failure
// is a *SectionError naming the ref.
func GetSections(ctx context.Context, st Store, job string, ckpt uint64, refs []BlobRef) ([][]byte, error) {
	if sr, ok := st.(SectionReader); ok {
		return sr.GetSections(ctx, job, ckpt, refs)
	}
	out := make([][]byte, len(refs))
	for i, ref := range refs {
		data, err := st.GetBlob(ctx, job, ckpt, ref)
		if err != nil {
			return nil, &SectionError{Index: i, Err: err}
		}
		out[i] = data
	}
	return out, nil
}

// SectionError says which of the refs given to GetSections failed.
type SectionError struct {
	Index int // into the refs
	Err   error
}

// Error is the underlying error.
func (e *SectionError) Error() string { return e.Err.Error() }

// Unwrap gives the underlying error (ErrCorrupt, ErrNotFound, …).
func (e *SectionError) Unwrap() error { return e.Err }

// getBlob reads one blob or section through read and verifies it.
func getBlob(job string, ckpt uint64, ref BlobRef, read func(name string) ([]byte, error)) ([]byte, error) {
	out, err := sectionsOf(job, ckpt, []BlobRef{ref}, read)
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// sectionsOf reads each object named by refs once through read, verifies
// every ref (size and CRC32C of its section) and cuts the sections out.
func sectionsOf(job string, ckpt uint64, refs []BlobRef, read func(name string) ([]byte, error)) ([][]byte, error) {
	objects := map[string][]byte{}
	out := make([][]byte, len(refs))
	for i, ref := range refs {
		data, ok := objects[ref.Name]
		if !ok {
			var err error
			if data, err = read(ref.Name); err != nil {
				return nil, &SectionError{Index: i, Err: fmt.Errorf("get blob %q of job %q checkpoint %d: %w", ref.Name, job, ckpt, err)}
			}
			objects[ref.Name] = data
		}
		if err := verifyBlob(job, ckpt, ref, data); err != nil {
			return nil, &SectionError{Index: i, Err: err}
		}
		if ref.Whole > 0 {
			data = data[ref.Offset : ref.Offset+ref.Size]
		}
		out[i] = data
	}
	return out, nil
}
