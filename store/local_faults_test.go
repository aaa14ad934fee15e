package store

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/weirstream/weir/internal/faultfs"
)

func newFaultyLocal(t *testing.T) (*Local, *faultfs.FS, string) {
	t.Helper()
	dir := t.TempDir()
	ffs := faultfs.New(OSFS{})
	s, err := NewLocal(dir, WithFS(ffs))
	if err != nil {
		t.Fatalf("NewLocal: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s, ffs, dir
}

// regularFiles lists the regular files below dir (slash-separated, relative).
func regularFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walk %s: %v", dir, err)
	}
	return out
}

var tempName = regexp.MustCompile(`\.tmp-[0-9]+`)

// normalise replaces the store root and random temp-file suffixes so
// operation logs can be compared.
func normalise(ops []string, dir string) []string {
	out := make([]string, len(ops))
	for i, op := range ops {
		op = strings.ReplaceAll(op, dir, "$D")
		out[i] = tempName.ReplaceAllString(op, ".tmp-*")
	}
	return out
}

// The durable write order: temp file, write, fsync, close, rename, directory
// fsync; every new directory's parent is fsynced before anything goes in it.
func TestLocalWriteOrder(t *testing.T) {
	s, ffs, dir := newFaultyLocal(t)
	ctx := context.Background()
	const chk = "$D/job1/chk-00000000000000000001"

	ffs.ResetLog()
	ref, err := s.PutBlob(ctx, "job1", 1, "op/3/kg-17", []byte("state"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"mkdir $D/job1", "syncdir $D",
		"mkdir " + chk, "syncdir $D/job1",
		"mkdir " + chk + "/op", "syncdir " + chk,
		"mkdir " + chk + "/op/3", "syncdir " + chk + "/op",
		"create " + chk + "/op/3",
		"write " + chk + "/op/3/.tmp-*",
		"sync " + chk + "/op/3/.tmp-*",
		"close " + chk + "/op/3/.tmp-*",
		"rename " + chk + "/op/3/.tmp-* -> " + chk + "/op/3/kg-17",
		"syncdir " + chk + "/op/3",
	}
	if got := normalise(ffs.Ops(), dir); !slices.Equal(got, want) {
		t.Fatalf("first PutBlob operations:\n got %q\nwant %q", got, want)
	}

	ffs.ResetLog()
	m := sampleManifest("job1", 1, []BlobRef{ref})
	if err := s.CommitManifest(ctx, m); err != nil {
		t.Fatal(err)
	}
	want = []string{
		"mkdir $D/job1", "mkdir " + chk, // exist already: no fsync needed
		"open " + chk + "/_manifest",
		"create " + chk,
		"write " + chk + "/.tmp-*",
		"sync " + chk + "/.tmp-*",
		"close " + chk + "/.tmp-*",
		"rename " + chk + "/.tmp-* -> " + chk + "/_manifest",
		"syncdir " + chk,
	}
	if got := normalise(ffs.Ops(), dir); !slices.Equal(got, want) {
		t.Fatalf("CommitManifest operations:\n got %q\nwant %q", got, want)
	}

	ffs.ResetLog()
	if err := s.Delete(ctx, "job1", 1); err != nil {
		t.Fatal(err)
	}
	want = []string{
		"remove " + chk + "/_manifest", "syncdir " + chk,
		"stat " + chk, "removeall " + chk, "syncdir $D/job1",
	}
	if got := normalise(ffs.Ops(), dir); !slices.Equal(got, want) {
		t.Fatalf("Delete operations:\n got %q\nwant %q", got, want)
	}
}

// A fault at any step of PutBlob returns an error that wraps the cause and
// says which step failed where, and leaves no file behind: no partial blob
// under its name and no temporary file.
func TestLocalPutBlobFaults(t *testing.T) {
	const name = "op/3/kg-17"
	cases := []putFault{
		{"disk full while writing", "write", func(string) func(string) bool { return faultfs.Containing(".tmp-") }, syscall.ENOSPC, "write temp file"},
		{"disk full creating the temp file", "create", func(string) func(string) bool { return faultfs.Containing("op/3") }, syscall.ENOSPC, "create temp file"},
		{"failing fsync", "sync", func(string) func(string) bool { return faultfs.Containing(".tmp-") }, syscall.EIO, "fsync temp file"},
		{"failing close", "close", func(string) func(string) bool { return faultfs.Containing(".tmp-") }, syscall.EIO, "close temp file"},
		{"failing rename", "rename", func(string) func(string) bool { return faultfs.Containing("kg-17") }, syscall.EIO, "rename"},
		{"failing directory fsync after rename", "syncdir", func(d string) func(string) bool {
			return faultfs.Exactly(filepath.Join(d, "job1", checkpointDir(1), "op", "3"))
		}, syscall.EIO, "fsync directory"},
		{"failing mkdir", "mkdir", func(string) func(string) bool { return faultfs.Containing("chk-") }, syscall.ENOSPC, "create directory"},
		{"failing fsync of a new directory's parent", "syncdir", func(d string) func(string) bool {
			return faultfs.Exactly(filepath.Join(d, "job1"))
		}, syscall.EIO, "fsync directory"},
	}
	for _, tc := range cases {
		for _, put := range blobPutters {
			t.Run(tc.desc+"/"+put.name, func(t *testing.T) {
				testLocalPutBlobFault(t, put.put, name, tc)
			})
		}
	}
}

// blobPutters store a blob whole (PutBlob) and streamed in three writes
// (PutBlobStream).
var blobPutters = []struct {
	name string
	put  func(s *Local, ctx context.Context, job string, ckpt uint64, name string, data []byte) (BlobRef, error)
}{
	{"whole", (*Local).PutBlob},
	{"streamed", func(s *Local, ctx context.Context, job string, ckpt uint64, name string, data []byte) (BlobRef, error) {
		return s.PutBlobStream(ctx, job, ckpt, name, func(w io.Writer) error {
			for _, part := range [][]byte{data[:10], data[10:100], data[100:]} {
				if _, err := w.Write(part); err != nil {
					return err
				}
			}
			return nil
		})
	}},
}

// putFault is a fault at one step of storing a blob.
type putFault struct {
	desc  string
	op    string
	match func(dir string) func(string) bool
	err   error
	step  string
}

// testLocalPutBlobFault is one case of TestLocalPutBlobFaults.
func testLocalPutBlobFault(t *testing.T, put func(s *Local, ctx context.Context, job string, ckpt uint64, name string, data []byte) (BlobRef, error), name string, tc putFault) {
	s, ffs, dir := newFaultyLocal(t)
	ctx := context.Background()
	data := []byte(strings.Repeat("key-group state ", 64))
	ffs.Arm(tc.op, tc.match(dir), tc.err)
	_, err := put(s, ctx, "job1", 1, name, data)
	if err == nil {
		t.Fatal("PutBlob succeeded despite the fault")
	}
	if !errors.Is(err, tc.err) {
		t.Fatalf("error %v does not wrap %v", err, tc.err)
	}
	for _, want := range []string{tc.step, `"` + name + `"`, `"job1"`, "checkpoint 1", dir} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("error %q does not mention %q", err, want)
		}
	}
	if files := regularFiles(t, dir); len(files) != 0 {
		t.Fatalf("files left behind after failed PutBlob: %v", files)
	}
	_, err = s.GetBlob(ctx, "job1", 1, newBlobRef(name, data))
	wantErrIs(t, "GetBlob after failed PutBlob", err, ErrNotFound)

	ffs.Disarm()
	ref, err := put(s, ctx, "job1", 1, name, data)
	if err != nil {
		t.Fatalf("PutBlob after the fault cleared: %v", err)
	}
	if ref != newBlobRef(name, data) {
		t.Fatalf("ref %+v, want %+v", ref, newBlobRef(name, data))
	}
	if got, err := s.GetBlob(ctx, "job1", 1, ref); err != nil || string(got) != string(data) {
		t.Fatalf("GetBlob after retry = %d bytes, %v", len(got), err)
	}
}

// A streamed blob whose producer fails leaves nothing behind, and the error
// wraps the producer's; a Sectioned one's ref has no checksum, as PutBlob's.
func TestLocalPutBlobStreamProducerFails(t *testing.T) {
	s, _, dir := newFaultyLocal(t)
	ctx := context.Background()
	cause := errors.New("encoding failed")
	_, err := s.PutBlobStream(ctx, "job1", 1, "op/0/state", func(w io.Writer) error {
		if _, err := w.Write([]byte("half a blob")); err != nil {
			return err
		}
		return cause
	})
	if !errors.Is(err, cause) || !strings.Contains(err.Error(), `"op/0/state"`) {
		t.Fatalf("PutBlobStream: %v, want the producer's error, naming the blob", err)
	}
	if files := regularFiles(t, dir); len(files) != 0 {
		t.Fatalf("files left behind: %v", files)
	}
	data := []byte("whole blob")
	ref, err := s.PutBlobStream(Sectioned(ctx), "job1", 1, "op/0/state", func(w io.Writer) error { return writeAll(w, data) })
	if err != nil {
		t.Fatal(err)
	}
	want, err := s.PutBlob(Sectioned(ctx), "job1", 2, "op/0/state", data)
	if err != nil || ref != want || ref.CRC32C != 0 || ref.Size != int64(len(data)) {
		t.Fatalf("Sectioned ref %+v, PutBlob's %+v (%v)", ref, want, err)
	}
}

// A fault while committing the manifest leaves the checkpoint uncommitted:
// no manifest (not even a partial one) and no temp file is visible.
func TestLocalCommitManifestFaults(t *testing.T) {
	cases := []struct {
		desc string
		op   string
		err  error
		step string
	}{
		{"disk full while writing", "write", syscall.ENOSPC, "write temp file"},
		{"failing fsync", "sync", syscall.EIO, "fsync temp file"},
		{"failing rename", "rename", syscall.EXDEV, "rename"},
		{"failing directory fsync", "syncdir", syscall.EIO, "fsync directory"},
	}
	for _, tc := range cases {
		t.Run(tc.desc, func(t *testing.T) {
			s, ffs, dir := newFaultyLocal(t)
			ctx := context.Background()
			refs := putBlobs(t, s, "job1", 1, "count/0/kg-0", "count/0/kg-1")
			chk := filepath.Join(dir, "job1", checkpointDir(1))
			match := faultfs.Containing(chk + string(filepath.Separator) + ".tmp-")
			if tc.op == "syncdir" {
				match = faultfs.Exactly(chk)
			}
			ffs.Arm(tc.op, match, tc.err)
			m := sampleManifest("job1", 1, refs)
			err := s.CommitManifest(ctx, m)
			if !errors.Is(err, tc.err) {
				t.Fatalf("CommitManifest error %v does not wrap %v", err, tc.err)
			}
			for _, want := range []string{tc.step, `"job1"`, "checkpoint 1", chk} {
				if !strings.Contains(err.Error(), want) {
					t.Fatalf("error %q does not mention %q", err, want)
				}
			}
			want := []string{"job1/" + checkpointDir(1) + "/count/0/kg-0", "job1/" + checkpointDir(1) + "/count/0/kg-1"}
			if files := regularFiles(t, dir); !slices.Equal(files, want) {
				t.Fatalf("files after failed commit = %v, want only the blobs %v", files, want)
			}
			ffs.Disarm()
			wantList(t, s, "job1", nil)
			_, err = s.Latest(ctx, "job1")
			wantErrIs(t, "Latest after failed commit", err, ErrNotFound)
			if err := s.CommitManifest(ctx, m); err != nil {
				t.Fatalf("CommitManifest after the fault cleared: %v", err)
			}
			wantList(t, s, "job1", []uint64{1})
		})
	}
}

// Delete removes the manifest before the blobs: if removing the blobs fails,
// the checkpoint is already gone from List and a retried Delete finishes.
func TestLocalDeleteFaults(t *testing.T) {
	s, ffs, dir := newFaultyLocal(t)
	ctx := context.Background()
	commit(t, s, "job1", 1)
	commit(t, s, "job1", 2)
	chk := filepath.Join(dir, "job1", checkpointDir(2))
	ffs.Arm("removeall", faultfs.Exactly(chk), syscall.EBUSY)
	err := s.Delete(ctx, "job1", 2)
	if !errors.Is(err, syscall.EBUSY) || !strings.Contains(err.Error(), "remove blobs") {
		t.Fatalf("Delete error = %v, want one wrapping EBUSY that says it failed removing blobs", err)
	}
	wantList(t, s, "job1", []uint64{1})
	if got, err := s.Uncommitted(ctx, "job1"); err != nil || !slices.Equal(got, []uint64{2}) {
		t.Fatalf("Uncommitted = %v, %v; want [2]", got, err)
	}
	ffs.Disarm()
	if err := s.Delete(ctx, "job1", 2); err != nil {
		t.Fatalf("retried Delete: %v", err)
	}
	if _, err := os.Stat(chk); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("checkpoint directory still there: %v", err)
	}
}

// An I/O error reading the newest manifest is returned, not silently
// skipped: falling back to an older checkpoint is only for corruption.
func TestLocalLatestDoesNotHideIOErrors(t *testing.T) {
	s, ffs, dir := newFaultyLocal(t)
	ctx := context.Background()
	commit(t, s, "job1", 1)
	commit(t, s, "job1", 2)
	ffs.Arm("open", faultfs.Exactly(filepath.Join(dir, "job1", checkpointDir(2), manifestName)), syscall.EIO)
	m, err := s.Latest(ctx, "job1")
	if m != nil || !errors.Is(err, syscall.EIO) || errors.Is(err, ErrNotFound) {
		t.Fatalf("Latest = %v, %v; want nil and an error wrapping EIO", m, err)
	}
	_, err = s.List(ctx, "job1")
	if !errors.Is(err, syscall.EIO) {
		t.Fatalf("List error = %v, want one wrapping EIO", err)
	}
}
