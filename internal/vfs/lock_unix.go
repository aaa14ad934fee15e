//go:build unix

package vfs

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// Lock is an exclusive advisory lock (flock) on a file, held until Unlock.
// It is the operating system's, not an FS's: it excludes other processes
// and other LockFile calls in this process, the OS releases it when its
// holder dies, and a fault-injecting FS does not see it.
type Lock struct{ f *os.File }

// LockFile creates the file at path if it is missing and locks it
// exclusively, waiting for as long as another holder has it (a holder that
// is paused keeps it until it resumes and unlocks, or dies).
func LockFile(path string) (*Lock, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return &Lock{f: f}, nil
}

// Unlock releases the lock.
func (l *Lock) Unlock() error {
	if err := l.f.Close(); err != nil { // closing the only descriptor releases the flock
		return fmt.Errorf("unlock %s: %w", l.f.Name(), err)
	}
	return nil
}
