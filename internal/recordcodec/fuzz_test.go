package recordcodec

import (
	"math/rand/v2"
	"reflect"
	"testing"
)

// FuzzDecodeBatch decodes arbitrary bytes as batches of several shapes:
// DecodeBatch must never panic, and must agree with msgpack.Unmarshal (both
// fail, or both give equal values) wherever the library can be asked without
// risking a huge allocation; elsewhere it must fail. DecodeBatchWith, twice
// with one Strings (a cold cache, then a warm one), must give what
// DecodeBatch gives, error for error.
//
//	go test -run XXX -fuzz FuzzDecodeBatch ./internal/recordcodec
func FuzzDecodeBatch(f *testing.F) {
	// Small seeds: the fuzzer minimises what it finds, slowly for big input.
	g := gen{r: rand.New(rand.NewPCG(1, 2))}
	for n := range 4 {
		f.Add(mp(smallBatch[event](g, n)))
		f.Add(mpc(smallBatch[event](g, n)))
		f.Add(mp(smallBatch[allKinds](g, n)))
		f.Add(mpc(smallBatch[allKinds](g, n)))
		f.Add(mp(smallBatch[nested](g, n)))
		f.Add(reworded(g, smallBatch[nested](g, n)))
		f.Add(mp(smallBatch[int64](g, n)))
		f.Add(mp(smallBatch[string](g, n)))
	}
	f.Add(mp([]uint8{1, 2, 3}))
	f.Add(raw(0x91, 0x92, 0xa1, "x", 5))
	f.Add(raw(0x92, 0xc0, 0x83, 0xa1, "k", 0xa1, "a", 0xa1, "i", 1, 0xa1, "z", 0xd6, 0xff, be32(1)))

	ev, _ := For[event]()
	all, _ := For[allKinds]()
	nest, _ := For[nested]()
	ints, _ := For[int64]()
	strs, _ := For[string]()
	u8, _ := For[uint8]()
	bs, _ := For[[]byte]()
	f32, _ := For[float32]()
	f.Fuzz(func(t *testing.T, data []byte) {
		cache := new(Strings) // shared by the shapes, as strings are strings
		for name, err := range map[string]error{
			"event":    verdict(ev, data),
			"allKinds": verdict(all, data),
			"nested":   verdict(nest, data),
			"int64":    verdict(ints, data),
			"string":   verdict(strs, data),
			"uint8":    verdict(u8, data),
			"bytes":    verdict(bs, data),
			"float32":  verdict(f32, data),

			"event interned":    sameInterned(ev, data, cache),
			"allKinds interned": sameInterned(all, data, cache),
			"nested interned":   sameInterned(nest, data, cache),
			"string interned":   sameInterned(strs, data, cache),
			"bytes interned":    sameInterned(bs, data, cache),
		} {
			if err != nil {
				t.Errorf("%s: % x: %v", name, clip(data), err)
			}
		}
	})
}

// sameInterned decodes data with DecodeBatch and twice with DecodeBatchWith
// and strs: the results must be equal, or the errors identical.
func sameInterned[T any](c *Codec[T], data []byte, strs *Strings) error {
	want, wantErr := c.DecodeBatch(data)
	for pass := range 2 {
		got, err := c.DecodeBatchWith(nil, data, strs)
		switch {
		case (err == nil) != (wantErr == nil):
			return errorf("pass %d: DecodeBatchWith: %v, DecodeBatch: %v", pass, err, wantErr)
		case err != nil && err.Error() != wantErr.Error():
			return errorf("pass %d: DecodeBatchWith: %v, DecodeBatch: %v", pass, err, wantErr)
		case err == nil:
			if err := equalBatches(got, want); err != nil {
				return errorf("pass %d: DecodeBatchWith and DecodeBatch differ: %v", pass, err)
			}
		}
	}
	return nil
}

// smallBatch is a batch of n records with short values.
func smallBatch[T any](g gen, n int) []T {
	out := make([]T, n)
	for i := range out {
		g.fill(reflect.ValueOf(&out[i]).Elem())
	}
	return out
}
