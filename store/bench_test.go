package store

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/weirstream/weir/internal/natstest"
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

// BenchmarkJetStreamGetObject reads a 32 MiB object from an embedded
// server's file storage with the store's pull reader and, to compare, with
// ObjectStore.GetBytes.
func BenchmarkJetStreamGetObject(b *testing.B) {
	js := natstest.Start(b, natstest.Options{JetStream: true}).JetStream(b)
	s, err := NewJetStream(js)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	data := make([]byte, 32<<20)
	for i := range data {
		data[i] = byte(i * 7)
	}
	if _, err := s.PutBlob(ctx, "bench", 1, "big", data); err != nil {
		b.Fatal(err)
	}
	obs, err := js.ObjectStore(ctx, bucketName(s.cfg.prefix, "bench"))
	if err != nil {
		b.Fatal(err)
	}
	name := objectName(1, "big")
	b.Run("pull", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if _, err := s.getObject(ctx, obs, "bench", name); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("nats-get", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			c, cancel := context.WithTimeout(ctx, time.Minute)
			_, err := obs.GetBytes(c, name)
			cancel()
			if err != nil {
				b.Fatal(err)
			}
		}
	})
}
