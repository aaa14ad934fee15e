package store

import (
	"bytes"
	"errors"
	"io"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/rs/zerolog"

	"github.com/weirstream/weir/internal/faultfs"
)

// testBlobStreamer checks a BlobStreamer: a blob streamed in writes of all
// sizes, across the store's chunks, is the blob PutBlob stores (same ref,
// same bytes); a producer that fails partway leaves nothing visible under
// the name and its error is wrapped; the name takes a blob again after.
func testBlobStreamer(t *testing.T, s Store) {
	bs, ok := s.(BlobStreamer)
	if !ok {
		t.Fatalf("%T does not take streamed blobs", s)
	}
	ctx := testCtx(t)
	data := bytes.Repeat([]byte("streamed key-group state;"), 20000) // 500 KB
	stream := func(data []byte) func(io.Writer) error {
		return func(w io.Writer) error {
			for i, n := 0, 1; i < len(data); i, n = i+n, n*3 {
				if _, err := w.Write(data[i:min(i+n, len(data))]); err != nil {
					return err
				}
			}
			return nil
		}
	}
	ref, err := bs.PutBlobStream(ctx, "job1", 1, "op/0/state", stream(data))
	if err != nil {
		t.Fatal(err)
	}
	if ref != newBlobRef("op/0/state", data) {
		t.Fatalf("ref %+v, PutBlob's would be %+v", ref, newBlobRef("op/0/state", data))
	}
	if got, err := s.GetBlob(ctx, "job1", 1, ref); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("GetBlob: %d bytes, %v", len(got), err)
	}
	sec, err := bs.PutBlobStream(Sectioned(ctx), "job1", 1, "op/1/state", stream(data))
	if err != nil || sec.CRC32C != 0 || sec.Size != int64(len(data)) {
		t.Fatalf("Sectioned ref %+v, %v: want the size and no checksum", sec, err)
	}

	cause := errors.New("encoding failed")
	_, err = bs.PutBlobStream(ctx, "job1", 2, "op/0/state", func(w io.Writer) error {
		if err := stream(data[:300000])(w); err != nil {
			return err
		}
		return cause
	})
	if !errors.Is(err, cause) {
		t.Fatalf("PutBlobStream with a failing producer: %v, want its error", err)
	}
	if _, err := s.GetBlob(ctx, "job1", 2, newBlobRef("op/0/state", data[:300000])); !errors.Is(err, ErrNotFound) {
		t.Fatalf("GetBlob of the failed blob: %v, want ErrNotFound", err)
	}
	ref, err = bs.PutBlobStream(ctx, "job1", 2, "op/0/state", stream(data[:1000]))
	if err != nil {
		t.Fatalf("PutBlobStream after the failed one: %v", err)
	}
	if got, err := s.GetBlob(ctx, "job1", 2, ref); err != nil || !bytes.Equal(got, data[:1000]) {
		t.Fatalf("GetBlob after the failed one: %d bytes, %v", len(got), err)
	}
}

func TestLocalBlobStreamer(t *testing.T) {
	testBlobStreamer(t, localHarness().open(t))
}

func TestJetStreamBlobStreamer(t *testing.T) {
	testBlobStreamer(t, jsHarness(t).open(t))
}

// TestMirrorBlobStreamer: a Mirror over a JetStream primary streams into
// both; the local copy holds what the primary holds, and a failed stream
// leaves nothing in either.
func TestMirrorBlobStreamer(t *testing.T) {
	local, err := NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	m := &Mirror{Primary: jsHarness(t).open(t), Local: local, Log: zerolog.Nop()}
	testBlobStreamer(t, m)
	ctx := testCtx(t)
	for _, ck := range []uint64{1, 2} {
		ref := BlobRef{Name: "op/0/state"}
		want, err := m.Primary.(*JetStream).readObject(ctx, "job1", ck, ref.Name)
		if err != nil {
			t.Fatal(err)
		}
		got, err := local.readObject(ctx, "job1", ck, ref.Name)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("checkpoint %d: local copy of %d bytes (%v), primary's %d", ck, len(got), err, len(want))
		}
	}
	if files := regularFiles(t, local.Dir()); slices.ContainsFunc(files, func(f string) bool { return strings.Contains(f, ".tmp-") }) {
		t.Fatalf("temporary files left in the local copy: %v", files)
	}
}

// TestMirrorStreamLocalCopyFails: a local copy whose disk fills up is
// dropped, leaving nothing behind; the primary has the blob and the stream
// succeeds.
func TestMirrorStreamLocalCopyFails(t *testing.T) {
	primary, err := NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	local, ffs, dir := newFaultyLocal(t)
	m := &Mirror{Primary: primary, Local: local, Log: zerolog.Nop()}
	ffs.Arm(faultfs.OpWrite, faultfs.Containing(".tmp-"), syscall.ENOSPC)
	ctx := testCtx(t)
	data := bytes.Repeat([]byte("state;"), 100000)
	ref, err := m.PutBlobStream(ctx, "job1", 1, "op/0/state", func(w io.Writer) error {
		for i := 0; i < len(data); i += 4096 {
			if _, err := w.Write(data[i:min(i+4096, len(data))]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("PutBlobStream with a failing local copy: %v", err)
	}
	if got, err := primary.GetBlob(ctx, "job1", 1, ref); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("primary: %d bytes, %v", len(got), err)
	}
	if files := regularFiles(t, dir); len(files) != 0 {
		t.Fatalf("files left in the failed local copy: %v", files)
	}
}
