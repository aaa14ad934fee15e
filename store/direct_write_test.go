package store

import (
	"bytes"
	"context"
	"errors"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestLocalDirectConformance(t *testing.T) {
	h := localHarness()
	h.open = func(t *testing.T) Store {
		s, err := NewLocal(filepath.Join(t.TempDir(), "state"), WithDirectWrites())
		if err != nil {
			t.Fatalf("NewLocal: %v", err)
		}
		return s
	}
	runConformance(t, h)
}

// TestDirectWritesKeepEveryByte streams blobs of sizes around the direct
// chunk through a store that writes directly, in writes of random sizes,
// and reads each back whole.
func TestDirectWritesKeepEveryByte(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, seed))
	s, err := NewLocal(t.TempDir(), WithDirectWrites())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	for i, size := range []int{0, 1, directChunk - 1, directChunk, directChunk + 1, 3*directChunk + 4097} {
		data := make([]byte, size)
		for j := range data {
			data[j] = byte(rng.Uint32())
		}
		ref, err := s.PutBlobStream(ctx, "job", 1, "blob-"+string(rune('a'+i)), func(w io.Writer) error {
			for rest := data; len(rest) > 0; {
				n := min(len(rest), 1+rng.IntN(2*directChunk))
				if err := writeAll(w, rest[:n]); err != nil {
					return err
				}
				rest = rest[n:]
			}
			return nil
		})
		if err != nil {
			t.Fatalf("size %d: %v", size, err)
		}
		if ref.Size != int64(size) || ref.CRC32C != crc32.Checksum(data, castagnoli) {
			t.Fatalf("size %d: ref %+v", size, ref)
		}
		got, err := s.GetBlob(ctx, "job", 1, ref)
		if err != nil {
			t.Fatalf("size %d: read back: %v", size, err)
		}
		if !bytes.Equal(got, data) {
			t.Fatalf("size %d: read back %d bytes that differ from the %d written", size, len(got), len(data))
		}
	}
}

// TestDirectWriteErrorFailsTheBlob writes to a file opened read-only: the
// chunk's write error reaches the producer and no blob is left.
func TestDirectWriteErrorFailsTheBlob(t *testing.T) {
	p := filepath.Join(t.TempDir(), "blob")
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, finish := newDirectWriter(f)
	err = writeAll(w, make([]byte, directChunk))
	if ferr := finish(); err == nil {
		err = ferr
	}
	if err == nil || errors.Is(err, io.ErrShortWrite) {
		t.Fatalf("write to a read-only file: %v", err)
	}
}
