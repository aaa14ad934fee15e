package recordcodec

import (
	"bytes"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/weirstream/weir/internal/testseed"
)

// TestTruncated cuts valid batches at every byte offset (batches with long
// values at 300 offsets): every cut must be an error (msgpack values are
// prefix-free), never a panic.
func TestTruncated(t *testing.T) {
	t.Run("event", truncated[event])
	t.Run("allKinds", truncated[allKinds])
	t.Run("nested", truncated[nested])
	t.Run("many", truncated[many])
	t.Run("int64", truncated[int64])
	t.Run("string", truncated[string])
	t.Run("uint8", truncated[uint8])
	t.Run("bytes", truncated[[]byte])
}

func truncated[T any](t *testing.T) {
	c, _ := For[T]()
	testseed.Run(t, 10, 3, func(seed uint64) {
		g := gen{r: rand.New(rand.NewPCG(seed, 0))}
		batch := batchOf[T](g)
		if len(batch) > 8 {
			batch = batch[:8]
		}
		data := mp(batch)
		variants := [][]byte{data, reworded(g, batch)}
		for _, data := range variants {
			cuts := make([]int, 0, len(data))
			for cut := range len(data) {
				cuts = append(cuts, cut)
			}
			if len(cuts) > 2000 {
				g.r.Shuffle(len(cuts), func(i, j int) { cuts[i], cuts[j] = cuts[j], cuts[i] })
				cuts = cuts[:300]
			}
			for _, cut := range cuts {
				if out, err := c.DecodeBatch(data[:cut]); err == nil {
					t.Fatalf("seed %d: DecodeBatch of the first %d of %d bytes (% x) = %d records, want an error",
						seed, cut, len(data), clip(data[:cut]), len(out))
				}
			}
		}
	})
}

// TestGarbage feeds random and mutated bytes: no panic, the same verdict
// as the library wherever the library can be asked safely, and the same
// result with string interning as without.
func TestGarbage(t *testing.T) {
	ev, _ := For[event]()
	all, _ := For[allKinds]()
	nest, _ := For[nested]()
	testseed.Run(t, 300, 200, func(seed uint64) {
		r := rand.New(rand.NewPCG(seed, 0))
		var data []byte
		if r.IntN(2) == 0 {
			data = make([]byte, r.IntN(64))
			for i := range data {
				data[i] = byte(r.Uint32())
			}
		} else {
			// A valid batch with a few bytes changed.
			g := gen{r: r}
			data = mp(batchOf[nested](g))
			for range 1 + r.IntN(3) {
				if len(data) > 0 {
					data[r.IntN(len(data))] = byte(r.Uint32())
				}
			}
		}
		strs := new(Strings)
		for name, check := range map[string]func([]byte) error{
			"event":    func(d []byte) error { return verdict(ev, d) },
			"allKinds": func(d []byte) error { return verdict(all, d) },
			"nested":   func(d []byte) error { return verdict(nest, d) },

			"nested interned": func(d []byte) error { return sameInterned(nest, d, strs) },
		} {
			if err := check(data); err != nil {
				t.Fatalf("seed %d: %s: % x: %v", seed, name, clip(data), err)
			}
		}
	})
}

// verdict decodes data with c and compares with the library when that is
// safe; when it is not, DecodeBatch must fail.
func verdict[T any](c *Codec[T], data []byte) error {
	if !librarySafe(data) {
		if out, err := c.DecodeBatch(data); err == nil {
			return errorf("DecodeBatch decoded %d records from input the library cannot even skip", len(out))
		}
		return nil
	}
	return sameAsLibrary(c, data)
}

// TestHostile sends length prefixes that lie and nesting that goes too deep:
// each must be an error, found without allocating anything like the
// announced size.
func TestHostile(t *testing.T) {
	c, _ := For[event]()
	i := raw(0xa1, "i")
	asArray := raw(0x92, 0xa1, "x", 5) // a record only the library decodes
	deep := bytes.Repeat([]byte{0x91}, 200000)
	cases := []struct {
		name string
		data []byte
	}{
		{"array32 of 4G records", raw(0xdd, be32(0xffffffff), 0x80)},
		{"array16 beyond the data", raw(0xdc, be16(0xffff), 0x80)},
		{"str32 of 4GB", raw(0x91, 0x81, 0xa1, "k", 0xdb, be32(0xffffffff), "x")},
		{"bin32 of 4GB in an unknown key", raw(0x91, 0x81, 0xa1, "z", 0xc6, be32(0xffffffff), "x")},
		{"map32 of 4G entries", raw(0x91, 0xdf, be32(0xffffffff), i, 1)},
		{"array32 of 4G in an unknown key", raw(0x91, 0x81, 0xa1, "z", 0xdd, be32(0xffffffff), 1)},
		{"ext32 of 4GB in an unknown key", raw(0x91, 0x81, 0xa1, "z", 0xc9, be32(0xffffffff), 1, 2)},
		{"bin32 of 4GB after a record for the library", raw(0x92, asArray, 0x81, 0xa1, "z", 0xc6, be32(0xffffffff), "x")},
		{"array32 of 4G after a record for the library", raw(0x92, asArray, 0x81, 0xa1, "z", 0xdd, be32(0xffffffff), 1)},
		{"nesting deeper than maxDepth", raw(0x91, 0x81, 0xa1, "z", deep, 0xc0)},
		{"nesting deeper than maxDepth, then a record for the library", raw(0x92, 0x81, 0xa1, "z", deep, 0xc0, asArray)},
	}
	for _, tc := range cases {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		out, err := c.DecodeBatch(tc.data)
		runtime.ReadMemStats(&after)
		if err == nil {
			t.Errorf("%s: DecodeBatch = %d records, want an error", tc.name, len(out))
		}
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20+uint64(100*len(tc.data)) {
			t.Errorf("%s: DecodeBatch allocated %d bytes for %d bytes of input", tc.name, grew, len(tc.data))
		}
	}
}

// TestErrorContext checks that errors say which record and field failed.
func TestErrorContext(t *testing.T) {
	ev, _ := For[event]()
	data := mp([]event{{Key: "first", Seq: 1}, {Key: "second", Seq: 2}})
	cut := bytes.Index(data, []byte("second")) + 2
	_, err := ev.DecodeBatch(data[:cut])
	if want := `decode batch: record 1 field "k": unexpected end of data`; err == nil || err.Error() != want {
		t.Errorf("truncated in a field: got %v, want %s", err, want)
	}

	nest, _ := For[nested]()
	data = mp([]nested{{}, {Mid: middle{In: inner{S: "deep value"}}}})
	cut = bytes.Index(data, []byte("deep value")) + 1
	_, err = nest.DecodeBatch(data[:cut])
	if want := `decode batch: record 1 field "mid.in.s": unexpected end of data`; err == nil || err.Error() != want {
		t.Errorf("truncated in a nested field: got %v, want %s", err, want)
	}

	// The library's own errors keep its text, with context in front.
	_, err = ev.DecodeBatch(raw(0x91, 0x81, 0xa1, "i", 0xa1, "x"))
	if err == nil || !strings.HasPrefix(err.Error(), "decode batch: msgpack: ") {
		t.Errorf("type error: got %v, want the library's error", err)
	}
}
