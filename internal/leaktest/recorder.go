package leaktest

import (
	"fmt"
	"testing"
)

// Recorder is a testing.TB whose cleanups and errors a test runs and reads,
// to check what a test kit's cleanup reports. Calls it does not override go
// to the embedded TB.
type Recorder struct {
	testing.TB
	cleanups []func()
	// Errs holds what Errorf was given, formatted.
	Errs []string
}

// Helper implements testing.TB.
func (r *Recorder) Helper() {}

// Name implements testing.TB.
func (r *Recorder) Name() string { return "recorded" }

// Cleanup records f; RunCleanups runs it.
func (r *Recorder) Cleanup(f func()) { r.cleanups = append(r.cleanups, f) }

// Errorf records the error.
func (r *Recorder) Errorf(format string, args ...any) {
	r.Errs = append(r.Errs, fmt.Sprintf(format, args...))
}

// RunCleanups runs the recorded cleanups, last registered first.
func (r *Recorder) RunCleanups() {
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
	r.cleanups = nil
}
