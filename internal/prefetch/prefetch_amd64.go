package prefetch

import "unsafe"

// Bytes hints that the bytes of the string or byte slice whose header is
// at hdr will be read soon: up to MaxBytes of them, from the first.
//
//go:noescape
func Bytes(hdr unsafe.Pointer)
