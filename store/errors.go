package store

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors callers branch on with errors.Is.
var (
	// ErrNotFound reports a missing job, checkpoint, manifest or blob.
	ErrNotFound = errors.New("not found")
	// ErrCorrupt reports a blob or manifest that fails its size, CRC or format check.
	ErrCorrupt = errors.New("corrupt")
	// ErrInvalidName reports a job or blob name that is empty, absolute,
	// contains "." or ".." segments, empty segments or reserved names.
	ErrInvalidName = errors.New("invalid name")
	// ErrExists reports an attempt to commit a different manifest for a
	// checkpoint that is already committed.
	ErrExists = errors.New("already exists")
	// ErrClosed reports use of a store after Close.
	ErrClosed = errors.New("store closed")
)

// CorruptManifestsError reports committed manifests that were skipped by
// List or Latest because they failed verification. It wraps ErrCorrupt and
// the individual verification errors.
type CorruptManifestsError struct {
	Job         string   // job whose manifests were skipped
	Checkpoints []uint64 // skipped checkpoints, in the order they were examined
	Errs        []error  // one verification error per skipped checkpoint
}

// Error lists the skipped checkpoints and why.
func (e *CorruptManifestsError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "job %q: skipped %d corrupt manifest(s)", e.Job, len(e.Checkpoints))
	for _, err := range e.Errs {
		b.WriteString("; ")
		b.WriteString(err.Error())
	}
	return b.String()
}

// Unwrap makes errors.Is(err, ErrCorrupt) true and exposes each cause.
func (e *CorruptManifestsError) Unwrap() []error {
	return append([]error{ErrCorrupt}, e.Errs...)
}
