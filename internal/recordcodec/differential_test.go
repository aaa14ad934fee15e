package recordcodec

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"
	"github.com/weirstream/weir/internal/testseed"
)

// TestDifferential runs random batches of every test shape through the
// codec and the library: the encoded bytes must be identical to the
// library's with compact integers, and decode with the library to the same
// records; both those bytes and the library's default-option bytes (fixed
// width integers, as in old checkpoints) must decode as the library decodes
// them, with or without string interning; and reworded encodings (keys
// shuffled, unknown keys, compact ints and floats, nil values, missing keys,
// array-encoded structs) must decode as the library decodes them. A failure
// names its seed; -seed=N replays it.
func TestDifferential(t *testing.T) {
	t.Run("event", differential[event])
	t.Run("count", differential[count])
	t.Run("allKinds", differential[allKinds])
	t.Run("nested", differential[nested])
	t.Run("many", differential[many])
	t.Run("empty", differential[empty])
	t.Run("int64", differential[int64])
	t.Run("int", differential[int])
	t.Run("int8", differential[int8])
	t.Run("uint16", differential[uint16])
	t.Run("uint", differential[uint])
	t.Run("uint8", differential[uint8])
	t.Run("myByte", differential[myByte])
	t.Run("float32", differential[float32])
	t.Run("float64", differential[float64])
	t.Run("bool", differential[bool])
	t.Run("string", differential[string])
	t.Run("myString", differential[myString])
	t.Run("bytes", differential[[]byte])
}

func differential[T any](t *testing.T) {
	c, ok := For[T]()
	if !ok {
		t.Fatalf("For[%s]: not supported", reflect.TypeFor[T]())
	}
	testseed.Run(t, 12, 8, func(seed uint64) {
		g := gen{r: rand.New(rand.NewPCG(seed, 0))}
		batch := batchOf[T](g)

		want, err := marshalCompact(batch)
		if err != nil {
			t.Fatalf("seed %d: library encode with compact ints: %v", seed, err)
		}
		got, err := c.AppendBatch([]byte("prefix"), batch)
		if err != nil {
			t.Fatalf("seed %d: AppendBatch: %v", seed, err)
		}
		if string(got[:6]) != "prefix" {
			t.Fatalf("seed %d: AppendBatch overwrote dst", seed)
		}
		if !bytes.Equal(got[6:], want) {
			t.Fatalf("seed %d: %d records: AppendBatch and the library (compact ints) differ from byte %d:\n got % x\nwant % x",
				seed, len(batch), firstDiff(got[6:], want), clip(got[6:]), clip(want))
		}

		var lib []T
		if err := msgpack.Unmarshal(want, &lib); err != nil {
			t.Fatalf("seed %d: msgpack.Unmarshal of AppendBatch's bytes: %v", seed, err)
		}
		if err := equalBatches(lib, batch); err != nil {
			t.Fatalf("seed %d: msgpack.Unmarshal of AppendBatch's bytes is not the batch: %v", seed, err)
		}
		dec, err := fastPath(c, want) // no help from the library
		if err != nil {
			t.Fatalf("seed %d: DecodeBatch without the library: %v", seed, err)
		}
		if err := equalBatches(dec, lib); err != nil {
			t.Fatalf("seed %d: DecodeBatch(AppendBatch(x)) and msgpack.Unmarshal differ: %v", seed, err)
		}
		if again, _ := c.AppendBatch(nil, dec); !bytes.Equal(again, want) {
			t.Fatalf("seed %d: the decoded batch does not encode back to the same bytes", seed)
		}
		strs := new(Strings)
		var interned [2][]T
		for i := range interned {
			if interned[i], err = c.DecodeBatchWith(nil, want, strs); err != nil {
				t.Fatalf("seed %d: DecodeBatchWith, pass %d: %v", seed, i, err)
			}
			if err := equalBatches(interned[i], lib); err != nil {
				t.Fatalf("seed %d: DecodeBatchWith, pass %d, and msgpack.Unmarshal differ: %v", seed, i, err)
			}
		}

		// Old checkpoints hold the library's default encoding.
		fixed := mp(batch)
		var libFixed []T
		if err := msgpack.Unmarshal(fixed, &libFixed); err != nil {
			t.Fatalf("seed %d: msgpack.Unmarshal: %v", seed, err)
		}
		decFixed, err := fastPath(c, fixed)
		if err != nil {
			t.Fatalf("seed %d: DecodeBatch(msgpack.Marshal(x)) without the library: %v", seed, err)
		}
		if err := equalBatches(decFixed, libFixed); err != nil {
			t.Fatalf("seed %d: DecodeBatch(msgpack.Marshal(x)) and msgpack.Unmarshal differ: %v", seed, err)
		}

		// Decoded values must not alias the input, which callers reuse.
		for _, data := range [][]byte{want, fixed} {
			for i := range data {
				data[i] = 0xff
			}
		}
		for name, out := range map[string][]T{"DecodeBatch": dec, "DecodeBatchWith": interned[0], "DecodeBatchWith again": interned[1], "DecodeBatch(fixed)": decFixed} {
			if err := equalBatches(out, lib); err != nil {
				t.Fatalf("seed %d: %s: decoded values changed with the input buffer: %v", seed, name, err)
			}
		}

		for v := range 4 {
			data := reworded(g, batch)
			if err := sameAsLibrary(c, data); err != nil {
				t.Fatalf("seed %d: reworded encoding %d (% x): %v", seed, v, clip(data), err)
			}
			// (An array of numbers is no batch of bytes: the library refuses it.)
			if _, err := fastPath(c, data); err != nil && !c.bytesBatch {
				t.Fatalf("seed %d: reworded encoding %d (% x): without the library: %v", seed, v, clip(data), err)
			}
		}
		var buf bytes.Buffer
		enc := msgpack.NewEncoder(&buf)
		enc.UseArrayEncodedStructs(true)
		if err := enc.Encode(batch); err != nil {
			t.Fatalf("seed %d: encode with array-encoded structs: %v", seed, err)
		}
		if err := sameAsLibrary(c, buf.Bytes()); err != nil {
			t.Fatalf("seed %d: array-encoded structs (% x): %v", seed, clip(buf.Bytes()), err)
		}
	})
}

// TestLargeBatches checks the batch sizes around the array16/array32 (and,
// for bytes, bin16/bin32) boundary against the library, compact and not.
// The boundary is the batch's header: a struct of flat fields (event)
// crosses it as a nested one does, in a third of the time under -race.
func TestLargeBatches(t *testing.T) {
	t.Run("event", large[event])
	t.Run("int64", large[int64])
	t.Run("string", large[string])
	t.Run("uint8", large[uint8])
}

func large[T any](t *testing.T) {
	c, ok := For[T]()
	if !ok {
		t.Fatalf("For[%s]: not supported", reflect.TypeFor[T]())
	}
	seed, ok := testseed.Replay(t)
	if !ok {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d", seed)
	g := gen{r: rand.New(rand.NewPCG(seed, 0))}
	for _, n := range []int{65535, 65536} {
		batch := make([]T, n)
		for i := range batch {
			g.fill(reflect.ValueOf(&batch[i]).Elem())
		}
		want := mpc(batch)
		got, err := c.AppendBatch(nil, batch)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%d records: AppendBatch and the library (compact ints) differ from byte %d", n, firstDiff(got, want))
		}
		if err := sameAsLibrary(c, want); err != nil {
			t.Fatalf("%d records: %v", n, err)
		}
		if err := sameAsLibrary(c, mp(batch)); err != nil {
			t.Fatalf("%d records, default encoding: %v", n, err)
		}
	}
}

// reworded encodes batch as other msgpack writers might: every struct as a
// map[string]any (so keys come out in random order), with unknown keys
// added, keys left out, nil for some values and records, and integers and
// floats in compact forms.
func reworded[T any](g gen, batch []T) []byte {
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.UseCompactInts(g.r.IntN(2) == 0)
	enc.UseCompactFloats(g.r.IntN(2) == 0)
	var v any
	if batch != nil {
		recs := make([]any, len(batch))
		for i := range batch {
			recs[i] = generic(g, reflect.ValueOf(batch[i]))
		}
		v = recs
	}
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

// generic turns v into a value the library encodes as it encodes v, with
// structs as maps and the changes reworded describes.
func generic(g gen, v reflect.Value) any {
	if g.r.IntN(40) == 0 {
		return nil
	}
	if v.Kind() != reflect.Struct {
		return v.Interface()
	}
	infos, err := structFields(v.Type())
	if err != nil {
		panic(err)
	}
	m := make(map[string]any, len(infos)+1)
	for _, fi := range infos {
		if g.r.IntN(15) == 0 {
			continue
		}
		m[fi.name] = generic(g, v.FieldByName(fi.goName))
	}
	if g.r.IntN(3) == 0 {
		m[fmt.Sprintf("unknown%d", g.r.IntN(3))] = junk(g, 3)
	}
	return m
}

// junk is a random msgpack value of any type, ext included, nested up to
// depth levels.
func junk(g gen, depth int) any {
	n := 9
	if depth > 0 {
		n = 11
	}
	switch g.r.IntN(n) {
	case 0:
		return nil
	case 1:
		return g.int64()
	case 2:
		return g.uint64()
	case 3:
		return g.string()
	case 4:
		return g.bytes()
	case 5:
		return g.r.IntN(2) == 0
	case 6:
		return float32(g.float64())
	case 7:
		return g.float64()
	case 8:
		return time.Unix(int64(g.r.Uint32()), int64(g.r.IntN(1e9))) // an ext value
	case 9:
		s := make([]any, g.r.IntN(4))
		for i := range s {
			s[i] = junk(g, depth-1)
		}
		return s
	default:
		m := make(map[string]any)
		for range g.r.IntN(4) {
			m[g.string()] = junk(g, depth-1)
		}
		return m
	}
}

// firstDiff is the index of the first byte where a and b differ.
func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// clip shortens long byte slices in failure messages.
func clip(b []byte) []byte {
	if len(b) > 200 {
		return b[:200]
	}
	return b
}
