//go:build !amd64

package prefetch

import "unsafe"

// Bytes hints that the bytes of the string or byte slice whose header is
// at hdr will be read soon; on this architecture it does nothing.
func Bytes(hdr unsafe.Pointer) {}
