package prefetch

import (
	"sync"
	"testing"
	"unsafe"
)

// header is a string or slice header with any data pointer and length.
type header struct {
	data uintptr
	n    int
}

// TestBytesNeverFaults hands Bytes headers whose data no load could read:
// nil with a length, an unmapped address, a length far past MaxBytes. A
// load in their place would crash the test binary.
func TestBytesNeverFaults(t *testing.T) {
	for _, h := range []header{
		{0, 0},
		{0, 1 << 20},
		{8, 64},
		{1 << 47, 1 << 30},
		{^uintptr(0) &^ 63, 4096},
		{1 << 12, -1},
	} {
		Bytes(unsafe.Pointer(&h))
	}
	s := "a string of some bytes"
	Bytes(unsafe.Pointer(&s))
	b := make([]byte, 3*MaxBytes)
	Bytes(unsafe.Pointer(&b))
}

// TestBytesOfAChangingHeader calls Bytes on a slice header another
// goroutine keeps replacing: under the race detector a read of the header
// in Go would be reported, and a torn header must not fault.
func TestBytesOfAChangingHeader(t *testing.T) {
	var v struct {
		n int
		b []byte
	}
	bufs := [][]byte{make([]byte, 256), nil, make([]byte, 1<<16), {}}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			v.n = i
			v.b = bufs[i%len(bufs)]
		}
	}()
	for range 100_000 {
		Bytes(unsafe.Pointer(&v.b))
	}
	close(stop)
	wg.Wait()
}
