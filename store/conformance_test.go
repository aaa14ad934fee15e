package store

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// harness adapts one Store implementation to the shared conformance tests.
type harness struct {
	// open returns a fresh, empty store; the test closes it.
	open func(t *testing.T) Store
	// rawRead returns the stored bytes of a blob or of "_manifest" of a
	// checkpoint, bypassing every check of the store.
	rawRead func(t *testing.T, s Store, job string, ckpt uint64, name string) []byte
	// rawWrite replaces the stored bytes of a blob or of "_manifest",
	// bypassing every check of the store (simulates corruption).
	rawWrite func(t *testing.T, s Store, job string, ckpt uint64, name string, data []byte)
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// putBlobs stores one blob per name with distinct contents and returns the refs.
func putBlobs(t *testing.T, s Store, job string, ckpt uint64, names ...string) []BlobRef {
	t.Helper()
	refs := make([]BlobRef, 0, len(names))
	for _, n := range names {
		ref, err := s.PutBlob(testCtx(t), job, ckpt, n, blobData(job, ckpt, n))
		if err != nil {
			t.Fatalf("PutBlob(%q, %d, %q): %v", job, ckpt, n, err)
		}
		refs = append(refs, ref)
	}
	return refs
}

func blobData(job string, ckpt uint64, name string) []byte {
	return []byte(strings.Repeat(fmt.Sprintf("%s|%d|%s;", job, ckpt, name), 7))
}

// sampleManifest builds a manifest of one keyed task whose key groups are refs.
func sampleManifest(job string, ckpt uint64, refs []BlobRef) *Manifest {
	kg := make(map[int]BlobRef, len(refs))
	for i, r := range refs {
		kg[i] = r
	}
	opState := BlobRef{Name: "src/0/offset", Size: 3, CRC32C: 42}
	return &Manifest{
		Job:            job,
		CheckpointID:   ckpt,
		Fingerprint:    "fp-123",
		MaxParallelism: 128,
		Parallelism:    map[string]int{"count": 2, "src": 1},
		KeyGroups:      map[string][]int32{"count": {0, 0, 1, 1}},
		Tasks: []TaskSnapshot{
			{Operator: "count", Instance: 0, KeyGroups: kg, SourceOffset: -1,
				Channels: []ChannelBlob{{Input: 1, Blob: BlobRef{Name: "count/0/in-1", Size: 9, CRC32C: 7}, Buffers: 2, Records: 30}}},
			{Operator: "src", Instance: 0, OperatorState: &opState, SourceOffset: 1234},
		},
		Mode:              "unaligned",
		TriggeredUnixNano: 1_700_000_000_000_000_000 + int64(ckpt),
		CompletedUnixNano: 1_700_000_000_500_000_000 + int64(ckpt),
	}
}

func commit(t *testing.T, s Store, job string, ckpt uint64) *Manifest {
	t.Helper()
	refs := putBlobs(t, s, job, ckpt, "count/0/kg-0", "count/0/kg-1")
	m := sampleManifest(job, ckpt, refs)
	if err := s.CommitManifest(testCtx(t), m); err != nil {
		t.Fatalf("CommitManifest(%q, %d): %v", job, ckpt, err)
	}
	return m
}

func wantList(t *testing.T, s Store, job string, want []uint64) {
	t.Helper()
	got, err := s.List(testCtx(t), job)
	if err != nil {
		t.Fatalf("List(%q): %v", job, err)
	}
	if len(got) != len(want) || (len(want) > 0 && !slices.Equal(got, want)) {
		t.Fatalf("List(%q) = %v, want %v", job, got, want)
	}
}

func wantErrIs(t *testing.T, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("%s: error %v, want one wrapping %v", what, err, target)
	}
}

// runConformance runs the behaviour every Store must have.
func runConformance(t *testing.T, h harness) {
	newStore := func(t *testing.T) Store {
		s := h.open(t)
		t.Cleanup(func() { s.Close() })
		return s
	}

	t.Run("PutGetRoundTrip", func(t *testing.T) {
		s := newStore(t)
		ctx := testCtx(t)
		names := []string{"count/3/kg-17", "count/3/kg-18", "src/0/offset", "flat", "deep/a/b/c/d"}
		refs := putBlobs(t, s, "job1", 1, names...)
		for i, ref := range refs {
			data := blobData("job1", 1, names[i])
			if ref.Name != names[i] || ref.Size != int64(len(data)) || ref.CRC32C != Checksum(data) {
				t.Fatalf("ref %+v does not describe %q (%d bytes, crc %08x)", ref, names[i], len(data), Checksum(data))
			}
			got, err := s.GetBlob(ctx, "job1", 1, ref)
			if err != nil {
				t.Fatalf("GetBlob(%q): %v", ref.Name, err)
			}
			if string(got) != string(data) {
				t.Fatalf("GetBlob(%q) = %q, want %q", ref.Name, got, data)
			}
		}
		empty, err := s.PutBlob(ctx, "job1", 1, "empty", nil)
		if err != nil {
			t.Fatalf("PutBlob(empty): %v", err)
		}
		if got, err := s.GetBlob(ctx, "job1", 1, empty); err != nil || len(got) != 0 {
			t.Fatalf("GetBlob(empty) = %q, %v", got, err)
		}
		_, err = s.GetBlob(ctx, "job1", 2, refs[0])
		wantErrIs(t, "GetBlob of another checkpoint", err, ErrNotFound)
		_, err = s.GetBlob(ctx, "nojob", 1, refs[0])
		wantErrIs(t, "GetBlob of unknown job", err, ErrNotFound)
		_, err = s.GetBlob(ctx, "job1", 1, BlobRef{Name: "missing"})
		wantErrIs(t, "GetBlob of missing blob", err, ErrNotFound)

		// Rewriting a blob replaces it; the old reference no longer verifies.
		newRef, err := s.PutBlob(ctx, "job1", 1, names[0], []byte("replaced"))
		if err != nil {
			t.Fatalf("rewrite blob: %v", err)
		}
		if got, err := s.GetBlob(ctx, "job1", 1, newRef); err != nil || string(got) != "replaced" {
			t.Fatalf("GetBlob(rewritten) = %q, %v", got, err)
		}
		_, err = s.GetBlob(ctx, "job1", 1, refs[0])
		wantErrIs(t, "GetBlob with stale ref", err, ErrCorrupt)
	})

	t.Run("CommitLatestListManifest", func(t *testing.T) {
		s := newStore(t)
		ctx := testCtx(t)
		wantList(t, s, "job1", nil)
		_, err := s.Latest(ctx, "job1")
		wantErrIs(t, "Latest of unknown job", err, ErrNotFound)

		m5 := commit(t, s, "job1", 5)
		m1 := commit(t, s, "job1", 1)
		m2 := commit(t, s, "job1", 2)
		commit(t, s, "job2", 9)
		wantList(t, s, "job1", []uint64{1, 2, 5})
		wantList(t, s, "job2", []uint64{9})

		latest, err := s.Latest(ctx, "job1")
		if err != nil {
			t.Fatalf("Latest: %v", err)
		}
		if !reflect.DeepEqual(latest, m5) {
			t.Fatalf("Latest = %+v, want %+v", latest, m5)
		}
		for _, want := range []*Manifest{m1, m2, m5} {
			got, err := s.Manifest(ctx, "job1", want.CheckpointID)
			if err != nil {
				t.Fatalf("Manifest(%d): %v", want.CheckpointID, err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("Manifest(%d) = %+v, want %+v", want.CheckpointID, got, want)
			}
			// Every referenced key-group blob is readable.
			for g, ref := range got.Tasks[0].KeyGroups {
				if _, err := s.GetBlob(ctx, "job1", want.CheckpointID, ref); err != nil {
					t.Fatalf("blob of key group %d: %v", g, err)
				}
			}
		}
		_, err = s.Manifest(ctx, "job1", 3)
		wantErrIs(t, "Manifest of uncommitted checkpoint", err, ErrNotFound)
		_, err = s.Manifest(ctx, "nojob", 1)
		wantErrIs(t, "Manifest of unknown job", err, ErrNotFound)

		// Idempotent re-commit; a different manifest for the same id is refused.
		if err := s.CommitManifest(ctx, m2); err != nil {
			t.Fatalf("re-commit identical manifest: %v", err)
		}
		changed := *m2
		changed.Fingerprint = "other"
		wantErrIs(t, "commit a different manifest", s.CommitManifest(ctx, &changed), ErrExists)
		if got, _ := s.Manifest(ctx, "job1", 2); got == nil || got.Fingerprint != m2.Fingerprint {
			t.Fatalf("manifest 2 changed after refused commit: %+v", got)
		}
	})

	t.Run("Delete", func(t *testing.T) {
		s := newStore(t)
		ctx := testCtx(t)
		m1 := commit(t, s, "job1", 1)
		commit(t, s, "job1", 2)
		if err := s.Delete(ctx, "job1", 1); err != nil {
			t.Fatalf("Delete(1): %v", err)
		}
		wantList(t, s, "job1", []uint64{2})
		_, err := s.Manifest(ctx, "job1", 1)
		wantErrIs(t, "Manifest of deleted checkpoint", err, ErrNotFound)
		_, err = s.GetBlob(ctx, "job1", 1, m1.Tasks[0].KeyGroups[0])
		wantErrIs(t, "GetBlob of deleted checkpoint", err, ErrNotFound)
		wantErrIs(t, "Delete twice", s.Delete(ctx, "job1", 1), ErrNotFound)
		wantErrIs(t, "Delete of unknown job", s.Delete(ctx, "nojob", 1), ErrNotFound)

		// An uncommitted checkpoint (blobs only) can be deleted too.
		refs := putBlobs(t, s, "job1", 3, "a/b", "c")
		if err := s.Delete(ctx, "job1", 3); err != nil {
			t.Fatalf("Delete(uncommitted 3): %v", err)
		}
		_, err = s.GetBlob(ctx, "job1", 3, refs[0])
		wantErrIs(t, "GetBlob of deleted uncommitted checkpoint", err, ErrNotFound)
		if u, ok := s.(UncommittedLister); ok {
			got, err := u.Uncommitted(ctx, "job1")
			if err != nil || len(got) != 0 {
				t.Fatalf("Uncommitted after delete = %v, %v; want none", got, err)
			}
		}

		if err := s.Delete(ctx, "job1", 2); err != nil {
			t.Fatalf("Delete(2): %v", err)
		}
		wantList(t, s, "job1", nil)
		_, err = s.Latest(ctx, "job1")
		wantErrIs(t, "Latest after deleting all", err, ErrNotFound)
	})

	t.Run("FlippedByteIsCorrupt", func(t *testing.T) {
		s := newStore(t)
		ctx := testCtx(t)
		ref := putBlobs(t, s, "job1", 7, "count/3/kg-17")[0]
		raw := h.rawRead(t, s, "job1", 7, ref.Name)
		raw[len(raw)/2] ^= 0x01
		h.rawWrite(t, s, "job1", 7, ref.Name, raw)
		_, err := s.GetBlob(ctx, "job1", 7, ref)
		wantErrIs(t, "GetBlob of flipped blob", err, ErrCorrupt)
		for _, want := range []string{`"count/3/kg-17"`, `"job1"`, "checkpoint 7", "crc32c", fmt.Sprintf("%08x", ref.CRC32C)} {
			if !strings.Contains(err.Error(), want) {
				t.Fatalf("error %q does not mention %s", err, want)
			}
		}
	})

	t.Run("Sections", func(t *testing.T) {
		s := newStore(t)
		ctx := testCtx(t)
		parts := [][]byte{[]byte("group-one"), []byte("g2"), []byte("third group bytes")}
		var whole []byte
		for _, p := range parts {
			whole = append(whole, p...)
		}
		ref, err := s.PutBlob(ctx, "job1", 3, "count/0/state", whole)
		if err != nil {
			t.Fatal(err)
		}
		off := int64(0)
		var secs []BlobRef
		for _, p := range parts {
			secs = append(secs, Section(ref, off, p))
			off += int64(len(p))
		}
		for i, sec := range secs {
			got, err := s.GetBlob(ctx, "job1", 3, sec)
			if err != nil || string(got) != string(parts[i]) {
				t.Fatalf("section %d = %q, %v; want %q", i, got, err, parts[i])
			}
		}
		// A flipped byte in section 2 is reported for section 2 only.
		raw := h.rawRead(t, s, "job1", 3, ref.Name)
		raw[len(raw)-1] ^= 0x40
		h.rawWrite(t, s, "job1", 3, ref.Name, raw)
		if _, err := s.GetBlob(ctx, "job1", 3, secs[0]); err != nil {
			t.Fatalf("intact section 0: %v", err)
		}
		_, err = s.GetBlob(ctx, "job1", 3, secs[2])
		wantErrIs(t, "GetBlob of flipped section", err, ErrCorrupt)
		// A truncated object fails every section.
		h.rawWrite(t, s, "job1", 3, ref.Name, raw[:len(raw)-3])
		_, err = s.GetBlob(ctx, "job1", 3, secs[0])
		wantErrIs(t, "GetBlob of section of truncated blob", err, ErrCorrupt)
	})

	t.Run("PutBlobSectioned", func(t *testing.T) {
		s := newStore(t)
		ctx := testCtx(t)
		parts := [][]byte{[]byte("group-one"), []byte("third group bytes")}
		whole := append(slices.Clone(parts[0]), parts[1]...)
		ref, err := s.PutBlob(Sectioned(ctx), "job1", 4, "count/0/state", whole)
		if err != nil {
			t.Fatal(err)
		}
		if ref.Name != "count/0/state" || ref.Size != int64(len(whole)) || ref.CRC32C != 0 {
			t.Fatalf("sectioned PutBlob ref %+v, want the name and size and no checksum", ref)
		}
		if got := h.rawRead(t, s, "job1", 4, ref.Name); string(got) != string(whole) {
			t.Fatalf("stored %q, want %q", got, whole)
		}
		sec := SectionSummed(ref, int64(len(parts[0])), int64(len(parts[1])), Checksum(parts[1]))
		if got, err := s.GetBlob(ctx, "job1", 4, sec); err != nil || string(got) != string(parts[1]) {
			t.Fatalf("section of a sectioned blob = %q, %v; want %q", got, err, parts[1])
		}
		bad := sec
		bad.CRC32C ^= 1
		_, err = s.GetBlob(ctx, "job1", 4, bad)
		wantErrIs(t, "GetBlob of a section with the wrong checksum", err, ErrCorrupt)
	})

	t.Run("TruncatedBlobIsCorrupt", func(t *testing.T) {
		s := newStore(t)
		ctx := testCtx(t)
		ref := putBlobs(t, s, "job1", 7, "count/3/kg-18")[0]
		raw := h.rawRead(t, s, "job1", 7, ref.Name)
		h.rawWrite(t, s, "job1", 7, ref.Name, raw[:len(raw)-5])
		_, err := s.GetBlob(ctx, "job1", 7, ref)
		wantErrIs(t, "GetBlob of truncated blob", err, ErrCorrupt)
		for _, want := range []string{`"count/3/kg-18"`, "checkpoint 7", fmt.Sprintf("size %d bytes, expected %d", ref.Size-5, ref.Size)} {
			if !strings.Contains(err.Error(), want) {
				t.Fatalf("error %q does not mention %s", err, want)
			}
		}
	})

	t.Run("BadManifestIsDetected", func(t *testing.T) {
		good, err := EncodeManifest(sampleManifest("job1", 3, nil))
		if err != nil {
			t.Fatal(err)
		}
		other, err := EncodeManifest(sampleManifest("job1", 2, nil))
		if err != nil {
			t.Fatal(err)
		}
		flipped := slices.Clone(good)
		flipped[len(flipped)-3] ^= 0x40
		cases := map[string][]byte{
			"torn":           good[:len(good)/2],
			"header only":    good[:frameHeaderSize],
			"empty":          {},
			"garbage":        []byte("this is not a manifest at all, just text"),
			"flipped body":   flipped,
			"wrong identity": other, // the manifest of checkpoint 2 stored as 3
		}
		for name, bad := range cases {
			t.Run(name, func(t *testing.T) {
				s := newStore(t)
				ctx := testCtx(t)
				m1 := commit(t, s, "job1", 1)
				commit(t, s, "job1", 3)
				h.rawWrite(t, s, "job1", 3, manifestName, bad)

				_, err := s.Manifest(ctx, "job1", 3)
				wantErrIs(t, "Manifest", err, ErrCorrupt)
				if !strings.Contains(err.Error(), "checkpoint 3") {
					t.Fatalf("error %q does not name the checkpoint", err)
				}

				ids, err := s.List(ctx, "job1")
				wantErrIs(t, "List", err, ErrCorrupt)
				var cme *CorruptManifestsError
				if !errors.As(err, &cme) || !slices.Equal(cme.Checkpoints, []uint64{3}) {
					t.Fatalf("List error %v: want a CorruptManifestsError naming checkpoint 3", err)
				}
				if !slices.Equal(ids, []uint64{1}) {
					t.Fatalf("List = %v, want [1]", ids)
				}

				latest, err := s.Latest(ctx, "job1")
				wantErrIs(t, "Latest", err, ErrCorrupt)
				if !reflect.DeepEqual(latest, m1) {
					t.Fatalf("Latest fell back to %+v, want checkpoint 1", latest)
				}
				if u, ok := s.(UncommittedLister); ok {
					got, err := u.Uncommitted(ctx, "job1")
					if err != nil || !slices.Equal(got, []uint64{3}) {
						t.Fatalf("Uncommitted = %v, %v; want [3]", got, err)
					}
				}

				// With no valid manifest left, Latest reports both classes.
				if err := s.Delete(ctx, "job1", 1); err != nil {
					t.Fatal(err)
				}
				latest, err = s.Latest(ctx, "job1")
				if latest != nil || !errors.Is(err, ErrNotFound) || !errors.Is(err, ErrCorrupt) {
					t.Fatalf("Latest = %v, %v; want nil and an error wrapping ErrNotFound and ErrCorrupt", latest, err)
				}

				// Re-committing over a corrupt manifest repairs the checkpoint.
				m3 := sampleManifest("job1", 3, nil)
				if err := s.CommitManifest(ctx, m3); err != nil {
					t.Fatalf("re-commit over corrupt manifest: %v", err)
				}
				wantList(t, s, "job1", []uint64{3})
			})
		}
	})

	t.Run("UncommittedIsInvisible", func(t *testing.T) {
		s := newStore(t)
		ctx := testCtx(t)
		putBlobs(t, s, "job1", 4, "count/0/kg-0", "count/1/kg-1")
		wantList(t, s, "job1", nil)
		_, err := s.Latest(ctx, "job1")
		wantErrIs(t, "Latest with only uncommitted data", err, ErrNotFound)
		if errors.Is(err, ErrCorrupt) {
			t.Fatalf("Latest: uncommitted data reported as corrupt: %v", err)
		}
		m2 := commit(t, s, "job1", 2)
		putBlobs(t, s, "job1", 6, "count/0/kg-0")
		wantList(t, s, "job1", []uint64{2})
		latest, err := s.Latest(ctx, "job1")
		if err != nil || !reflect.DeepEqual(latest, m2) {
			t.Fatalf("Latest = %+v, %v; want checkpoint 2 without error", latest, err)
		}
		_, err = s.Manifest(ctx, "job1", 4)
		wantErrIs(t, "Manifest of uncommitted checkpoint", err, ErrNotFound)
		if u, ok := s.(UncommittedLister); ok {
			got, err := u.Uncommitted(ctx, "job1")
			if err != nil || !slices.Equal(got, []uint64{4, 6}) {
				t.Fatalf("Uncommitted = %v, %v; want [4 6]", got, err)
			}
		}
	})

	t.Run("InvalidNames", func(t *testing.T) {
		s := newStore(t)
		ctx := testCtx(t)
		ref := BlobRef{Name: "ok"}
		for _, job := range badJobs {
			_, err := s.PutBlob(ctx, job, 1, "ok", []byte("x"))
			wantErrIs(t, fmt.Sprintf("PutBlob(job %q)", job), err, ErrInvalidName)
			_, err = s.GetBlob(ctx, job, 1, ref)
			wantErrIs(t, fmt.Sprintf("GetBlob(job %q)", job), err, ErrInvalidName)
			_, err = s.Manifest(ctx, job, 1)
			wantErrIs(t, fmt.Sprintf("Manifest(job %q)", job), err, ErrInvalidName)
			_, err = s.Latest(ctx, job)
			wantErrIs(t, fmt.Sprintf("Latest(job %q)", job), err, ErrInvalidName)
			_, err = s.List(ctx, job)
			wantErrIs(t, fmt.Sprintf("List(job %q)", job), err, ErrInvalidName)
			wantErrIs(t, fmt.Sprintf("Delete(job %q)", job), s.Delete(ctx, job, 1), ErrInvalidName)
			wantErrIs(t, fmt.Sprintf("CommitManifest(job %q)", job), s.CommitManifest(ctx, sampleManifest(job, 1, nil)), ErrInvalidName)
		}
		for _, name := range badBlobNames {
			_, err := s.PutBlob(ctx, "job1", 1, name, []byte("x"))
			wantErrIs(t, fmt.Sprintf("PutBlob(%q)", name), err, ErrInvalidName)
			if !strings.Contains(err.Error(), "blob name") {
				t.Fatalf("PutBlob(%q): error %q does not say what was wrong", name, err)
			}
			_, err = s.GetBlob(ctx, "job1", 1, BlobRef{Name: name})
			wantErrIs(t, fmt.Sprintf("GetBlob(%q)", name), err, ErrInvalidName)
			m := sampleManifest("job1", 1, []BlobRef{{Name: name}})
			wantErrIs(t, fmt.Sprintf("CommitManifest with blob %q", name), s.CommitManifest(ctx, m), ErrInvalidName)
		}
		wantList(t, s, "job1", nil)
	})

	t.Run("Close", func(t *testing.T) {
		s := h.open(t)
		ctx := testCtx(t)
		ref := putBlobs(t, s, "job1", 1, "a")[0]
		if err := s.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		if err := s.Close(); err != nil {
			t.Fatalf("second Close: %v", err)
		}
		_, err := s.PutBlob(ctx, "job1", 1, "b", nil)
		wantErrIs(t, "PutBlob after Close", err, ErrClosed)
		_, err = s.GetBlob(ctx, "job1", 1, ref)
		wantErrIs(t, "GetBlob after Close", err, ErrClosed)
		_, err = s.Latest(ctx, "job1")
		wantErrIs(t, "Latest after Close", err, ErrClosed)
	})

	t.Run("ConcurrentPuts", func(t *testing.T) {
		s := newStore(t)
		ctx := testCtx(t)
		const workers, perWorker = 8, 6
		var wg sync.WaitGroup
		refs := make([][]BlobRef, workers)
		errs := make([]error, workers)
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range perWorker {
					name := fmt.Sprintf("op-%d/%d/kg-%d", w%3, w, i)
					ref, err := s.PutBlob(ctx, "job1", 1, name, blobData("job1", 1, name))
					if err != nil {
						errs[w] = err
						return
					}
					refs[w] = append(refs[w], ref)
				}
			}()
		}
		wg.Wait()
		for w := range workers {
			if errs[w] != nil {
				t.Fatalf("worker %d: %v", w, errs[w])
			}
			for _, ref := range refs[w] {
				if _, err := s.GetBlob(ctx, "job1", 1, ref); err != nil {
					t.Fatalf("GetBlob(%q): %v", ref.Name, err)
				}
			}
		}
	})

	runVerifyAndSweep(t, h, newStore)
}

// badJobs are job names every store must reject.
var badJobs = []string{"", ".", "..", "a/b", "/abs", `a\b`, ".hidden", "nul\x00", "tab\tname", strings.Repeat("j", 256)}

// badBlobNames are blob names every store must reject.
var badBlobNames = []string{"", "/abs", "a//b", "a/", "../x", "a/../b", "a/./b", ".", "..", ".tmp-1", "a/.hidden", `a\b`, "_manifest", "ctl\x01", strings.Repeat("s", 256)}
