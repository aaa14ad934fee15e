//go:build !linux

package store

// hugePages does nothing where there is no madvise.
func hugePages([]byte, bool) {}
