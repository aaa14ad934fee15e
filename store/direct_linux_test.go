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

// TestDirectWriterWritesPastTheCache checks the kernel's view of the file:
// direct I/O on while whole chunks are written, off for the tail.
func TestDirectWriterWritesPastTheCache(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "blob"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, finish := newDirectWriter(f)
	if _, ok := w.(*directWriter); !ok {
		t.Skip("this file system has no direct I/O")
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
