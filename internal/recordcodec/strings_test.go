package recordcodec

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/weirstream/weir/internal/testseed"
)

// sameData says whether two strings share their bytes.
func sameData(a, b string) bool { return unsafe.StringData(a) == unsafe.StringData(b) }

// keyBatch is n events whose keys cycle through distinct keys.
func keyBatch(n, distinct int) []event {
	recs := make([]event, n)
	for i := range recs {
		recs[i] = event{Key: fmt.Sprintf("k%06d", i%distinct), Seq: int64(i)}
	}
	return recs
}

// TestStringsShareRepeats decodes one batch twice with one Strings: string
// fields come out equal and sharing their bytes, within a batch and across
// batches; without a Strings every record has its own.
func TestStringsShareRepeats(t *testing.T) {
	c, _ := For[event]()
	recs := keyBatch(1000, 100)
	data, err := c.AppendBatch(nil, recs)
	if err != nil {
		t.Fatal(err)
	}
	strs := new(Strings)
	a, err := c.DecodeBatchWith(nil, data, strs)
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.DecodeBatchWith(nil, data, strs)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, recs) || !reflect.DeepEqual(b, recs) {
		t.Fatal("DecodeBatchWith did not give back the batch")
	}
	for i := range a {
		if !sameData(a[i].Key, b[i].Key) {
			t.Fatalf("record %d: key %q decoded twice into two strings", i, a[i].Key)
		}
		if !sameData(a[i].Key, a[i%100].Key) {
			t.Fatalf("record %d: key %q repeated in the batch into two strings", i, a[i].Key)
		}
	}

	x, err := c.DecodeBatchWith(nil, data, nil)
	if err != nil {
		t.Fatal(err)
	}
	y, err := c.DecodeBatch(data)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(x, recs) {
		t.Fatal("DecodeBatchWith(nil Strings) did not give back the batch")
	}
	for i := range x {
		if sameData(x[i].Key, y[i].Key) || sameData(x[i].Key, a[i].Key) || (i >= 100 && sameData(x[i].Key, x[i%100].Key)) {
			t.Fatalf("record %d: without a Strings, key %q shares its bytes", i, x[i].Key)
		}
	}
}

// TestStringsEveryPath checks interning where strings are read: fixstr in
// a struct field read inline, str8/bin through readString, nested fields,
// a batch of a string kind; and that it stops at 32 bytes and never touches
// []byte values.
func TestStringsEveryPath(t *testing.T) {
	s32, s33 := strings.Repeat("x", 32), strings.Repeat("y", 33)
	ev, _ := For[event]()
	for _, tc := range []struct {
		name   string
		data   []byte
		shared bool
	}{
		{"fixstr", raw(0x91, 0x81, 0xa1, "k", 0xa3, "abc"), true},
		{"fixstr after a key out of order", raw(0x91, 0x82, 0xa1, "i", 1, 0xa1, "k", 0xa3, "abc"), true},
		{"str8 of 32 bytes", raw(0x91, 0x81, 0xa1, "k", 0xd9, 32, s32), true},
		{"bin", raw(0x91, 0x81, 0xa1, "k", 0xc4, 3, "abc"), true},
		{"str16", raw(0x91, 0x81, 0xa1, "k", 0xda, be16(3), "abc"), true},
		{"str8 of 33 bytes", raw(0x91, 0x81, 0xa1, "k", 0xd9, 33, s33), false},
	} {
		strs := new(Strings)
		a, err1 := ev.DecodeBatchWith(nil, tc.data, strs)
		b, err2 := ev.DecodeBatchWith(nil, tc.data, strs)
		want, err3 := ev.DecodeBatch(tc.data)
		if err1 != nil || err2 != nil || err3 != nil || !reflect.DeepEqual(a, want) || !reflect.DeepEqual(b, want) {
			t.Fatalf("%s: %+v, %+v, want %+v (%v, %v, %v)", tc.name, a, b, want, err1, err2, err3)
		}
		if got := sameData(a[0].Key, b[0].Key); got != tc.shared {
			t.Errorf("%s: shared %t, want %t", tc.name, got, tc.shared)
		}
	}

	nest, _ := For[nested]()
	data := mpc([]nested{{Mid: middle{Tag: "tag", In: inner{S: "deep"}}, In: inner{S: "deep"}}})
	strs := new(Strings)
	n1, _ := nest.DecodeBatchWith(nil, data, strs)
	n2, _ := nest.DecodeBatchWith(nil, data, strs)
	if !sameData(n1[0].Mid.In.S, n2[0].Mid.In.S) || !sameData(n1[0].Mid.In.S, n1[0].In.S) || !sameData(n1[0].Mid.Tag, n2[0].Mid.Tag) {
		t.Error("nested string fields not shared")
	}

	for _, check := range []func() error{
		sharesScalars[string]([]string{"a1", "b22", s32, "a1"}),
		sharesScalars[myString]([]myString{"a1", "b22", myString(s32), "a1"}),
	} {
		if err := check(); err != nil {
			t.Error(err)
		}
	}

	all, _ := For[allKinds]()
	data = mpc([]allKinds{{S: "str", Named: "named", Bytes: []byte("bytes"), NamedB: []myByte("nb")}})
	strs = new(Strings)
	a1, _ := all.DecodeBatchWith(nil, data, strs)
	a2, _ := all.DecodeBatchWith(nil, data, strs)
	if !sameData(a1[0].S, a2[0].S) || !sameData(string(a1[0].Named), string(a2[0].Named)) {
		t.Error("allKinds string fields not shared")
	}
	if &a1[0].Bytes[0] == &a2[0].Bytes[0] || &a1[0].NamedB[0] == &a2[0].NamedB[0] {
		t.Error("[]byte fields shared")
	}
}

// sharesScalars checks a batch of a string kind: decoded twice with one
// Strings its values share their bytes (short ones), and equal values in a
// batch too.
func sharesScalars[S ~string](batch []S) func() error {
	return func() error {
		c, _ := For[S]()
		data, err := c.AppendBatch(nil, batch)
		if err != nil {
			return err
		}
		strs := new(Strings)
		a, _ := c.DecodeBatchWith(nil, data, strs)
		b, err := c.DecodeBatchWith(nil, data, strs)
		if err != nil || !reflect.DeepEqual(a, batch) || !reflect.DeepEqual(b, batch) {
			return fmt.Errorf("%T: %q, %q, %v", batch, a, b, err)
		}
		for i := range a {
			if !sameData(string(a[i]), string(b[i])) {
				return fmt.Errorf("%T: %q decoded twice into two strings", batch, a[i])
			}
		}
		if !sameData(string(a[0]), string(a[3])) {
			return fmt.Errorf("%T: a repeated value decoded into two strings", batch)
		}
		return nil
	}
}

// TestStringsCollisions decodes many batches with one Strings from key
// sets made to collide (sharing a slot, sharing their first and last eight
// bytes, differing in one byte, far more keys than slots, longer than 32
// bytes): every result must equal decoding without interning, and the
// table must stay consistent. A failure names its seed; -seed=N replays it.
func TestStringsCollisions(t *testing.T) {
	ev, _ := For[event]()
	ss, _ := For[string]()
	testseed.Run(t, 8, 3, func(seed uint64) {
		r := rand.New(rand.NewPCG(seed, 0))
		keys := collidingKeys(r)
		strs := new(Strings)
		for round := range 20 {
			n := 1 + r.IntN(3000)
			recs := make([]event, n)
			vals := make([]string, n)
			for i := range recs {
				k := keys[r.IntN(len(keys))]
				if r.IntN(2) == 0 { // runs of a smaller working set
					k = keys[r.IntN(min(len(keys), 64))]
				}
				recs[i] = event{Key: k, Seq: int64(i)}
				vals[i] = k
			}
			if err := internedMatches(ev, recs, strs); err != nil {
				t.Fatalf("seed %d: round %d: events: %v", seed, round, err)
			}
			if err := internedMatches(ss, vals, strs); err != nil {
				t.Fatalf("seed %d: round %d: strings: %v", seed, round, err)
			}
		}
		for k, s := range strs.slots {
			if s == "" {
				continue
			}
			i, j := internSlotsOf([]byte(s))
			if len(s) > maxInterned || (uint32(k) != i && uint32(k) != j) {
				t.Fatalf("seed %d: slot %d holds %q (%d bytes, slots %d and %d)", seed, k, s, len(s), i, j)
			}
		}
	})
}

// internedMatches encodes batch and decodes it with strs and without: the
// two must be equal, and equal to batch.
func internedMatches[T any](c *Codec[T], batch []T, strs *Strings) error {
	data, err := c.AppendBatch(nil, batch)
	if err != nil {
		return err
	}
	want, err := c.DecodeBatch(data)
	if err != nil {
		return err
	}
	got, err := c.DecodeBatchWith(nil, data, strs)
	if err != nil {
		return err
	}
	if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(got, batch) {
		return equalBatches(got, want)
	}
	return nil
}

// collidingKeys draws a key set of one of several collision-heavy kinds.
func collidingKeys(r *rand.Rand) []string {
	randomKey := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte('a' + r.IntN(26))
		}
		return b
	}
	var keys []string
	switch kind := r.IntN(5); kind {
	case 0: // 200 keys whose first slot is one of 8
		for len(keys) < 200 {
			k := randomKey(1 + r.IntN(maxInterned))
			if i, _ := internSlotsOf(k); i%(internSlots/8) == 0 {
				keys = append(keys, string(k))
			}
		}
	case 1: // the same first and last eight bytes, differing in the middle
		head, tail := randomKey(8), randomKey(8)
		for range 500 {
			keys = append(keys, string(head)+string(randomKey(1+r.IntN(maxInterned-16)))+string(tail))
		}
	case 2: // one length, one byte different
		base := randomKey(1 + r.IntN(maxInterned))
		for i := range base {
			for c := range 8 {
				k := bytes.Clone(base)
				k[i] = byte('A' + c)
				keys = append(keys, string(k))
			}
		}
	case 3: // far more keys than slots, any length up to 40
		for range 4 * internSlots {
			keys = append(keys, string(randomKey(r.IntN(41))))
		}
	default: // numbered keys, as streams carry
		for i := range 2 * internSlots {
			keys = append(keys, fmt.Sprintf("user-%d", i))
		}
	}
	keys = append(keys, "")
	r.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	return keys
}

// TestStringsAllocs decodes a batch of 4096 records with 1000 distinct keys
// into a recycled batch: once the Strings is warm, it allocates nothing
// (under 0.01 allocations a record), where decoding without one allocates
// a string a record.
func TestStringsAllocs(t *testing.T) {
	c, _ := For[event]()
	r := rand.New(rand.NewPCG(42, 42)) // fixed: the bound is about this key set
	random := make([]event, 4096)
	randomKeys := make([]string, 1000)
	for i := range randomKeys {
		b := make([]byte, 4+r.IntN(20))
		for j := range b {
			b[j] = byte(r.Uint32())
		}
		randomKeys[i] = string(b)
	}
	for i := range random {
		random[i] = event{Key: randomKeys[i%1000], Seq: int64(i)}
	}
	for name, recs := range map[string][]event{"numbered keys": keyBatch(4096, 1000), "random keys": random} {
		data, err := c.AppendBatch(nil, recs)
		if err != nil {
			t.Fatal(err)
		}
		strs := new(Strings)
		out, err := c.DecodeBatchWith(nil, data, strs) // warms strs
		if err != nil {
			t.Fatal(err)
		}
		perRecord := testing.AllocsPerRun(20, func() {
			out, err = c.DecodeBatchWith(out, data, strs)
		}) / float64(len(recs))
		if err != nil || !reflect.DeepEqual(out, recs) {
			t.Fatalf("%s: DecodeBatchWith = %v", name, err)
		}
		t.Logf("%s: %.4f allocations a record with a Strings", name, perRecord)
		if perRecord >= 0.01 {
			t.Errorf("%s: %.4f allocations a record with a warm Strings, want < 0.01", name, perRecord)
		}
		without := testing.AllocsPerRun(5, func() {
			out, err = c.DecodeBatchWith(out, data, nil)
		}) / float64(len(recs))
		if without < 0.99 {
			t.Errorf("%s: %.4f allocations a record without a Strings, want one a record", name, without)
		}
	}
}

// TestHashShortCoversEveryByte flips each bit of keys of every length up to
// maxInterned: the hash changes, and a key's two slots always differ.
func TestHashShortCoversEveryByte(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	for n := 1; n <= maxInterned; n++ {
		for range 4 {
			b := make([]byte, n)
			for i := range b {
				b[i] = byte(r.Uint32())
			}
			h := hashShort(b)
			for i := range b {
				for bit := range 8 {
					b[i] ^= 1 << bit
					if hashShort(b) == h {
						t.Fatalf("%d bytes % x: flipping bit %d of byte %d keeps the hash", n, b, bit, i)
					}
					if i, j := internSlotsOf(b); i == j {
						t.Fatalf("% x: both slots %d", b, i)
					}
					b[i] ^= 1 << bit
				}
			}
		}
	}
	if hashShort(nil) == hashShort([]byte{0}) {
		t.Fatal("the empty key and a zero byte hash alike")
	}
}

// TestStringsNil checks the nil cache and strings longer than it caches.
func TestStringsNil(t *testing.T) {
	var nilStrs *Strings
	if s := nilStrs.str([]byte("abc")); s != "abc" {
		t.Fatalf("nil Strings: %q", s)
	}
	strs := new(Strings)
	long := bytes.Repeat([]byte("z"), maxInterned+1)
	if s := strs.str(long); s != string(long) {
		t.Fatalf("long string: %q", s)
	}
	for _, s := range strs.slots {
		if s != "" {
			t.Fatalf("a string of %d bytes was cached", len(s))
		}
	}
}
