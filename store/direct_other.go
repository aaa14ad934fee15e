//go:build !linux

package store

import "os"

// setDirect is false where weir does not use direct I/O.
func setDirect(*os.File, bool) bool { return false }
