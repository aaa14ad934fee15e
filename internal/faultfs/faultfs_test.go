package faultfs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/weirstream/weir/internal/vfs"
)

// writeFile creates path through f with data, synced and closed.
func writeFile(f *FS, path, data string) error {
	file, err := f.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := file.Write([]byte(data)); err != nil {
		file.Close()
		return err
	}
	if err := file.Sync(); err != nil {
		file.Close()
		return err
	}
	return file.Close()
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestRecordsEveryCallInOrder(t *testing.T) {
	dir := t.TempDir()
	f := New(vfs.OS{})
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	if err := writeFile(f, a, "x"); err != nil {
		t.Fatal(err)
	}
	if err := f.Rename(a, b); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Stat(b); err != nil {
		t.Fatal(err)
	}
	want := []string{"openfile " + a, "write " + a, "sync " + a, "close " + a, "rename " + a + " -> " + b, "stat " + b}
	if got := f.Ops(); !slices.Equal(got, want) {
		t.Fatalf("ops %q\nwant %q", got, want)
	}
	if f.Calls() != len(want) {
		t.Fatalf("Calls() = %d, want %d", f.Calls(), len(want))
	}
	f.ResetLog()
	if len(f.Ops()) != 0 || f.Calls() != len(want) {
		t.Fatalf("after ResetLog: ops %q, calls %d", f.Ops(), f.Calls())
	}
}

// An armed rule fails only its operation on matching paths, with a path
// error that wraps the injected error; a failing write writes half.
func TestArmFailsMatchingCallsUntilDisarmed(t *testing.T) {
	dir := t.TempDir()
	f := New(vfs.OS{})
	full, other := filepath.Join(dir, "full"), filepath.Join(dir, "other")
	f.Arm(OpWrite, Exactly(full), syscall.ENOSPC)
	err := writeFile(f, full, "abcd")
	var pe *fs.PathError
	if !errors.Is(err, syscall.ENOSPC) || !errors.As(err, &pe) || pe.Op != OpWrite || pe.Path != full {
		t.Fatalf("write error %v, want a write path error on %s wrapping ENOSPC", err, full)
	}
	if got := read(t, full); got != "ab" {
		t.Fatalf("a failing write left %q, want the first half %q", got, "ab")
	}
	if err := writeFile(f, other, "abcd"); err != nil {
		t.Fatalf("a write to another path failed: %v", err)
	}
	f.Disarm()
	if err := writeFile(f, full, "abcd"); err != nil || read(t, full) != "abcd" {
		t.Fatalf("after Disarm: %v, %q", err, read(t, full))
	}
}

func TestFailCallFailsOnlyTheNthCall(t *testing.T) {
	dir := t.TempDir()
	f := New(vfs.OS{})
	p := filepath.Join(dir, "f")
	f.FailCall(3, syscall.EIO) // openfile, write, sync <- fails
	if err := writeFile(f, p, "data"); !errors.Is(err, syscall.EIO) || !strings.Contains(err.Error(), "sync") {
		t.Fatalf("error %v, want the sync (third call) to fail with EIO", err)
	}
	if err := writeFile(f, p, "data"); err != nil {
		t.Fatalf("a call after the nth failed: %v", err)
	}
}

// After the crash point no call reaches the disk: a rename does not happen,
// a write is torn in half, and every later call fails with ErrCrashed.
func TestCrashAfterStopsEveryLaterCall(t *testing.T) {
	dir := t.TempDir()
	f := New(vfs.OS{})
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	if err := writeFile(f, a, "abcd"); err != nil {
		t.Fatal(err)
	}
	f.CrashAfter(f.Calls())
	if err := f.Rename(a, b); !errors.Is(err, ErrCrashed) {
		t.Fatalf("rename after the crash: %v, want ErrCrashed", err)
	}
	if _, err := os.Stat(b); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the rename after the crash happened: %v", err)
	}
	f.Disarm()
	file, err := f.OpenFile(a, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.CrashAfter(f.Calls())
	if _, err := file.Write([]byte("efgh")); !errors.Is(err, ErrCrashed) {
		t.Fatalf("write after the crash: %v, want ErrCrashed", err)
	}
	if err := file.Close(); !errors.Is(err, ErrCrashed) {
		t.Fatalf("close after the crash: %v, want ErrCrashed", err)
	}
	if got := read(t, a); got != "abcdef" {
		t.Fatalf("file after a crash mid-write: %q, want the torn %q", got, "abcdef")
	}
	for _, call := range []func() error{
		func() error { return f.Mkdir(filepath.Join(dir, "d"), 0o755) },
		func() error { return f.RemoveAll(a) },
		func() error { _, err := f.ReadDir(dir); return err },
		func() error { return f.SyncDir(dir) },
	} {
		if err := call(); !errors.Is(err, ErrCrashed) {
			t.Fatalf("a call after the crash: %v, want ErrCrashed", err)
		}
	}
	if _, err := os.Stat(a); err != nil {
		t.Fatalf("RemoveAll after the crash removed the file: %v", err)
	}
}

// NoSync skips fsyncs but passes every other call through.
func TestNoSyncPassesEverythingButFsync(t *testing.T) {
	dir := t.TempDir()
	f := New(NoSync(vfs.OS{}))
	p := filepath.Join(dir, "f")
	if err := writeFile(f, p, "data"); err != nil {
		t.Fatal(err)
	}
	if err := f.SyncDir(dir); err != nil {
		t.Fatal(err)
	}
	if got := read(t, p); got != "data" {
		t.Fatalf("file %q, want data", got)
	}
	if err := f.SyncDir(filepath.Join(dir, "missing")); err != nil {
		t.Fatalf("SyncDir reached the disk: %v", err)
	}
}
