package store

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"
	"unsafe"
)

// directChunk is how much a directWriter gathers before it writes past the
// page cache: a multiple of every block size direct I/O asks alignment to.
const directChunk = 1 << 20

// directAlign is the alignment direct I/O asks of a buffer's address.
const directAlign = 4096

// directBufs holds the aligned buffers of directWriters between blobs.
var directBufs = sync.Pool{New: func() any { return alignedBuffer(directChunk, directAlign) }}

// alignedBuffer is n bytes starting at an address that is a multiple of
// align.
func alignedBuffer(n, align int) []byte {
	b := make([]byte, n+align)
	off := int(uintptr(unsafe.Pointer(&b[0])) & uintptr(align-1))
	if off != 0 {
		off = align - off
	}
	return b[off : off+n : off+n]
}

// aligned reports whether b starts at a multiple of directAlign.
func aligned(b []byte) bool {
	return len(b) > 0 && uintptr(unsafe.Pointer(&b[0]))%directAlign == 0
}

// directWriter writes a blob's bytes to its file past the page cache (the
// file opened for direct I/O): a write of whole blocks at an aligned
// address as it is, anything else gathered into aligned chunks of
// directChunk bytes, so
// storing a checkpoint neither copies it into the page cache nor leaves
// the kernel's write-back and reclaim of those pages to compete with the
// job for the CPU. What is left under a chunk at the end (finish) is
// written through the page cache. Where the file system refuses direct I/O
// the writes go through the page cache as usual.
type directWriter struct {
	f      *os.File
	buf    []byte
	n      int
	direct bool
}

// newDirectWriter returns a writer of f that writes past the page cache
// where f is an operating-system file that can be, and finish, which
// writes what is left and must be called once everything is written
// (before the file is synced), whatever the outcome. Any other f is
// returned as it is, with a finish that does nothing.
func newDirectWriter(f File) (io.Writer, func() error) {
	osf, ok := f.(*os.File)
	if !ok || !setDirect(osf, true) {
		return f, func() error { return nil }
	}
	d := &directWriter{f: osf, buf: directBufs.Get().([]byte), direct: true}
	return d, d.finish
}

// Write implements io.Writer.
func (d *directWriter) Write(p []byte) (int, error) {
	if d.buf == nil {
		return 0, errors.New("write to a finished blob")
	}
	done := 0
	if d.n == 0 && len(p) >= directAlign && aligned(p) {
		// An aligned run of whole blocks goes out as it is, uncopied.
		k := len(p) &^ (directAlign - 1)
		if err := d.write(p[:k]); err != nil {
			return 0, err
		}
		done, p = k, p[k:]
	}
	for len(p) > 0 {
		c := copy(d.buf[d.n:], p)
		d.n += c
		p = p[c:]
		if d.n == len(d.buf) {
			if err := d.flush(); err != nil {
				return done, err
			}
		}
		done += c
	}
	return done, nil
}

// flush writes the whole buffer.
func (d *directWriter) flush() error {
	err := d.write(d.buf[:d.n])
	d.n = 0
	return err
}

// write writes b, of whole blocks at an aligned address unless it is the
// tail: past the page cache, or through it once the file system has
// refused direct I/O.
func (d *directWriter) write(b []byte) error {
	if d.direct {
		n, err := d.f.Write(b)
		if err == nil && n != len(b) {
			err = io.ErrShortWrite
		}
		if n != 0 || !errors.Is(err, syscall.EINVAL) {
			return err
		}
		// Refused before any byte was written (an alignment this file
		// system asks that b does not meet): go on through the cache.
		if !setDirect(d.f, false) {
			return fmt.Errorf("direct write refused and turning it off failed: %w", err)
		}
		d.direct = false
	}
	return writeAll(d.f, b)
}

// finish writes what is left through the page cache and gives the buffer
// back.
func (d *directWriter) finish() error {
	if d.buf == nil {
		return nil
	}
	var err error
	if d.n > 0 {
		if d.direct && !setDirect(d.f, false) {
			err = errors.New("turn direct I/O off for the blob's last bytes")
		} else {
			d.direct = false
			err = d.flush()
		}
	}
	if aligned(d.buf) && len(d.buf) == directChunk {
		directBufs.Put(d.buf) // only what directBufs hands out goes back
	}
	d.buf = nil
	return err
}
