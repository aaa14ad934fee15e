package store

import (
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
)

var seedFlag = flag.Uint64("store.seed", 0, "replay a randomised store test with this seed")

func testSeed(t *testing.T) uint64 {
	seed := *seedFlag
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (replay with -store.seed=%d)", seed, seed)
	return seed
}

func TestManifestRoundTrip(t *testing.T) {
	m := sampleManifest("job1", 9, []BlobRef{{Name: "count/0/kg-0", Size: 10, CRC32C: 1}, {Name: "count/0/kg-1", Size: 0, CRC32C: 0}})
	data, err := EncodeManifest(m)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeManifest(data)
	if err != nil {
		t.Fatalf("DecodeManifest: %v", err)
	}
	if !reflect.DeepEqual(got, m) {
		t.Fatalf("round trip:\n got %+v\nwant %+v", got, m)
	}
}

// Every truncation and every single flipped byte of an encoded manifest is
// detected as corruption.
func TestManifestDetectsEveryTruncationAndFlip(t *testing.T) {
	data, err := EncodeManifest(sampleManifest("job1", 9, nil))
	if err != nil {
		t.Fatal(err)
	}
	for n := 0; n < len(data); n++ {
		if _, err := DecodeManifest(data[:n]); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("truncated to %d of %d bytes: error %v, want ErrCorrupt", n, len(data), err)
		}
	}
	if _, err := DecodeManifest(append(append([]byte(nil), data...), 0)); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("trailing byte: error %v, want ErrCorrupt", err)
	}
	for i := range data {
		for _, mask := range []byte{0x01, 0x80, 0xff} {
			bad := append([]byte(nil), data...)
			bad[i] ^= mask
			if _, err := DecodeManifest(bad); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("byte %d ^ %#02x: error %v, want ErrCorrupt", i, mask, err)
			}
		}
	}
}

// randomManifest builds a manifest with random content from r.
func randomManifest(r *rand.Rand) *Manifest {
	m := &Manifest{
		Job:               fmt.Sprintf("job-%d", r.IntN(100)),
		CheckpointID:      r.Uint64(),
		Fingerprint:       fmt.Sprintf("%016x", r.Uint64()),
		MaxParallelism:    1 + r.IntN(1024),
		Parallelism:       map[string]int{},
		KeyGroups:         map[string][]int32{},
		Mode:              []string{"none", "aligned", "unaligned"}[r.IntN(3)],
		TriggeredUnixNano: r.Int64(),
		CompletedUnixNano: r.Int64(),
	}
	for op := range 1 + r.IntN(4) {
		name := fmt.Sprintf("op%d", op)
		p := 1 + r.IntN(8)
		m.Parallelism[name] = p
		table := make([]int32, 1+r.IntN(128))
		for g := range table {
			table[g] = int32(r.IntN(p))
		}
		m.KeyGroups[name] = table
		for i := range p {
			ts := TaskSnapshot{Operator: name, Instance: i, SourceOffset: -1}
			if r.IntN(2) == 0 {
				ts.KeyGroups = map[int]BlobRef{}
				for g := range r.IntN(5) + 1 {
					ts.KeyGroups[g] = BlobRef{Name: fmt.Sprintf("%s/%d/kg-%d", name, i, g), Size: r.Int64N(1 << 30), CRC32C: r.Uint32()}
				}
			}
			if r.IntN(3) == 0 {
				ts.OperatorState = &BlobRef{Name: fmt.Sprintf("%s/%d/op", name, i), Size: r.Int64N(100), CRC32C: r.Uint32()}
				ts.SourceOffset = r.Int64N(1 << 40)
			}
			if op == 0 && r.IntN(2) == 0 {
				// A source by splits: instance i serves splits i, i+p, ….
				for s := i; s < 2*p; s += p {
					ts.Splits = append(ts.Splits, SourceSplit{ID: s, Of: 2 * p, Offset: r.Int64N(1 << 40)})
				}
			}
			for c := range r.IntN(3) {
				ts.Channels = append(ts.Channels, ChannelBlob{Input: c, Blob: BlobRef{Name: fmt.Sprintf("%s/%d/in-%d", name, i, c)}, Buffers: r.IntN(10), Records: r.IntN(1000)})
			}
			m.Tasks = append(m.Tasks, ts)
		}
	}
	return m
}

// Random manifests round-trip, and random damage to them is detected.
func TestManifestRandomised(t *testing.T) {
	r := rand.New(rand.NewPCG(testSeed(t), 0))
	for i := range 200 {
		m := randomManifest(r)
		data, err := EncodeManifest(m)
		if err != nil {
			t.Fatalf("manifest %d: encode: %v", i, err)
		}
		got, err := DecodeManifest(data)
		if err != nil || !reflect.DeepEqual(got, m) {
			t.Fatalf("manifest %d: round trip = %+v, %v; want %+v", i, got, err, m)
		}
		bad := append([]byte(nil), data...)
		pos := r.IntN(len(bad))
		bad[pos] ^= byte(1 + r.IntN(255))
		if _, err := DecodeManifest(bad); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("manifest %d: damaged byte %d not detected: %v", i, pos, err)
		}
		if _, err := DecodeManifest(data[:r.IntN(len(data))]); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("manifest %d: truncation not detected: %v", i, err)
		}
	}
}

// FuzzDecodeManifest checks the decoder never panics and only accepts input
// that re-encodes to an equivalent manifest.
func FuzzDecodeManifest(f *testing.F) {
	good, err := EncodeManifest(sampleManifest("job1", 3, []BlobRef{{Name: "a/b", Size: 1, CRC32C: 2}}))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(good[:frameHeaderSize])
	f.Add([]byte("WRMF"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := DecodeManifest(data)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("decode error %v does not wrap ErrCorrupt", err)
			}
			return
		}
		again, err := EncodeManifest(m)
		if err != nil {
			t.Fatalf("re-encode accepted manifest: %v", err)
		}
		m2, err := DecodeManifest(again)
		if err != nil || !reflect.DeepEqual(m, m2) {
			t.Fatalf("re-encoded manifest does not round-trip: %v", err)
		}
	})
}
