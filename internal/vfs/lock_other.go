//go:build !unix

package vfs

import (
	"errors"
	"fmt"
)

// Lock is an exclusive file lock; this platform has none.
type Lock struct{}

// LockFile fails: exclusive file locks are implemented on unix only.
func LockFile(path string) (*Lock, error) {
	return nil, fmt.Errorf("lock %s: %w", path, errors.ErrUnsupported)
}

// Unlock does nothing.
func (l *Lock) Unlock() error { return nil }
