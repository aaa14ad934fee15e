package store

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// fdFlags is the open file's flags as the kernel reports them.
func fdFlags(t *testing.T, f *os.File) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/self/fdinfo/%d", f.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "flags:"); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 8, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("no flags in %s", b)
	return 0
}

// directFile creates a file, closed when the test ends, on a file system
// that takes direct I/O: in the test's temporary directory, or where that
// refuses it (a tmpfs of an older kernel), in the package's directory.
func directFile(t *testing.T) *os.File {
	t.Helper()
	for _, dir := range []string{t.TempDir(), "."} {
		d, err := os.MkdirTemp(dir, ".direct-test-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(d) })
		f, err := os.Create(filepath.Join(d, "blob"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		if setDirect(f, true) && setDirect(f, false) {
			return f
		}
	}
	t.Fatal("neither the temporary directory nor the package's takes direct I/O: the direct writer cannot be tested here")
	return nil
}

// TestDirectWriterFallsBackWhenRefused gives the writer a buffer at an
// address direct I/O refuses: the chunk goes through the page cache
// instead, and so does the rest.
func TestDirectWriterFallsBackWhenRefused(t *testing.T) {
	f := directFile(t)
	if !setDirect(f, true) {
		t.Fatal("direct I/O refused on a file directFile found it for")
	}
	d := &directWriter{f: f, buf: alignedBuffer(directChunk+1, directAlign)[1:], direct: true}
	data := bytes.Repeat([]byte("weir"), directChunk/2+3)[1:] // not aligned: copied into buf
	if err := writeAll(d, data); err != nil {
		t.Fatal(err)
	}
	if d.direct {
		t.Fatal("still writing directly after a refused write")
	}
	if err := d.finish(); err != nil {
		t.Fatal(err)
	}
	if err := writeAll(d, data); err == nil {
		t.Fatal("a write after finish succeeded")
	}
	if b := directBufs.Get().([]byte); !aligned(b) {
		t.Fatal("finish gave the misaligned buffer to the pool of aligned ones")
	}
	got, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data) {
		t.Fatalf("file holds %d bytes that differ from the %d written", len(got), len(data))
	}
}

// TestDirectWriterWritesPastTheCache checks the kernel's view of the file:
// direct I/O on while whole chunks are written, off for the tail.
func TestDirectWriterWritesPastTheCache(t *testing.T) {
	f := directFile(t)
	w, finish := newDirectWriter(f)
	if _, ok := w.(*directWriter); !ok {
		t.Fatal("newDirectWriter did not write directly to a file that takes direct I/O")
	}
	data := bytes.Repeat([]byte{7}, directChunk+100)
	if err := writeAll(w, data); err != nil {
		t.Fatal(err)
	}
	if fdFlags(t, f)&syscall.O_DIRECT == 0 {
		t.Fatal("a chunk was written without direct I/O")
	}
	if err := finish(); err != nil {
		t.Fatal(err)
	}
	if fdFlags(t, f)&syscall.O_DIRECT != 0 {
		t.Fatal("direct I/O still on after finish")
	}
	got, err := os.ReadFile(f.Name())
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read back %d bytes, err %v", len(got), err)
	}
}
