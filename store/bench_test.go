package store

import (
	"context"
	"fmt"
	"testing"
)

func BenchmarkLocalPutBlob(b *testing.B) {
	for _, size := range []int{4 << 10, 256 << 10} {
		b.Run(fmt.Sprintf("%dKiB", size>>10), func(b *testing.B) {
			s, err := NewLocal(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			data := make([]byte, size)
			ctx := context.Background()
			b.SetBytes(int64(size))
			i := 0
			for b.Loop() {
				if _, err := s.PutBlob(ctx, "bench", 1, fmt.Sprintf("op/%d/kg-%d", i%4, i%128), data); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

func BenchmarkLocalGetBlob(b *testing.B) {
	s, err := NewLocal(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	data := make([]byte, 256<<10)
	ref, err := s.PutBlob(ctx, "bench", 1, "op/0/kg-0", data)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := s.GetBlob(ctx, "bench", 1, ref); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeDecodeManifest(b *testing.B) {
	refs := make([]BlobRef, 128)
	for i := range refs {
		refs[i] = BlobRef{Name: fmt.Sprintf("count/0/kg-%d", i), Size: 4096, CRC32C: uint32(i)}
	}
	m := sampleManifest("bench", 1, refs)
	for b.Loop() {
		data, err := EncodeManifest(m)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := DecodeManifest(data); err != nil {
			b.Fatal(err)
		}
	}
}
