package keygroups

import (
	"bytes"
	"flag"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

var seedFlag = flag.Uint64("seed", 0, "replay seed for randomised keygroups tests (0: pick one)")

// testSeed returns the seed for a randomised test and logs it for replay.
func testSeed(t testing.TB) uint64 {
	s := *seedFlag
	if s == 0 {
		s = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (replay with -seed=%d)", s, s)
	return s
}

// Vectors checked against the smhasher reference MurmurHash3_x86_32 (C,
// compiled with gcc) and the commonly published test vectors.
func TestMurmur3ReferenceVectors(t *testing.T) {
	cases := []struct {
		in   string
		seed uint32
		want uint32
	}{
		{"", 0, 0},
		{"", 1, 0x514E28B7},
		{"", 0xffffffff, 0x81F16F39},
		{"\x00\x00\x00\x00", 0, 0x2362F9DE},
		{"hello", 0, 0x248BFA47},
		{"test", 0, 0xBA6BD213},
		{"Hello, world!", 0, 0xC0363E43},
		{"The quick brown fox jumps over the lazy dog", 0, 0x2E4FF723},
		{"The quick brown fox jumps over the lazy dog", 0x9747b28c, 0x2FA826CD},
		{"Hello, world!", 0x9747b28c, 0x24884CBA},
		{"aaaa", 0x9747b28c, 0x5A97808A},
		{"aaa", 0x9747b28c, 0x283E0130},
		{"aa", 0x9747b28c, 0x5D211726},
		{"a", 0x9747b28c, 0x7FA09EA6},
		{"abcd", 0x9747b28c, 0xF0478627},
		{"abc", 0x9747b28c, 0xC84A62DD},
		{"ab", 0x9747b28c, 0x74875592},
	}
	for _, c := range cases {
		if got := Murmur3([]byte(c.in), c.seed); got != c.want {
			t.Errorf("Murmur3(%q, %#x) = %#08x, want %#08x", c.in, c.seed, got, c.want)
		}
		if c.seed == 0 {
			if got := HashKey(c.in); got != c.want {
				t.Errorf("HashKey(%q) = %#08x, want %#08x", c.in, got, c.want)
			}
			if got := HashBytes([]byte(c.in)); got != c.want {
				t.Errorf("HashBytes(%q) = %#08x, want %#08x", c.in, got, c.want)
			}
		}
	}
}

// Frozen: changing any of these moves state between key groups and breaks
// every stored snapshot.
func TestPinnedKeyGroups(t *testing.T) {
	strs := []struct {
		key   string
		hash  uint32
		group int
	}{
		{"k000000", 0x253DFA7A, 122},
		{"k000001", 0x6284CDCA, 74},
		{"k000042", 0x6D44B487, 7},
		{"k000127", 0x7DF7F3E0, 96},
		{"k999999", 0x6E6140D1, 81},
		{"user-17", 0xD554E2E9, 105},
		{"", 0, 0},
	}
	for _, c := range strs {
		if got := HashKey(c.key); got != c.hash {
			t.Errorf("HashKey(%q) = %#08x, want %#08x", c.key, got, c.hash)
		}
		if got := KeyGroup(c.key, 128); got != c.group {
			t.Errorf("KeyGroup(%q, 128) = %d, want %d", c.key, got, c.group)
		}
	}
	if got := KeyGroup(int64(42), 128); got != 62 { // hash 0x6F8F913E
		t.Errorf("KeyGroup(int64(42), 128) = %d, want 62", got)
	}
	if got := HashKey(42); got != 0x6F8F913E {
		t.Errorf("HashKey(42) = %#08x, want 0x6F8F913E", got)
	}
	if got := HashKey(int8(-1)); got != 0x627564E8 {
		t.Errorf("HashKey(int8(-1)) = %#08x, want 0x627564E8", got)
	}
	if got := KeyGroup(-1, 128); got != 104 {
		t.Errorf("KeyGroup(-1, 128) = %d, want 104", got)
	}
}

type userID string
type shard int16
type seq uint8

func TestCanonicalBytes(t *testing.T) {
	le := func(u uint64) []byte {
		b := make([]byte, 8)
		for i := range b {
			b[i] = byte(u >> (8 * i))
		}
		return b
	}
	cases := []struct {
		name string
		got  []byte
		want []byte
	}{
		{"string", AppendKeyBytes(nil, "héllo"), []byte("héllo")},
		{"named string", AppendKeyBytes(nil, userID("u1")), []byte("u1")},
		{"int", AppendKeyBytes(nil, 258), le(258)},
		{"negative int", AppendKeyBytes(nil, -2), le(math.MaxUint64 - 1)},
		{"int8", AppendKeyBytes(nil, int8(-128)), le(uint64(math.MaxUint64 - 127))},
		{"int16", AppendKeyBytes(nil, int16(300)), le(300)},
		{"int32", AppendKeyBytes(nil, int32(-1)), le(math.MaxUint64)},
		{"int64", AppendKeyBytes(nil, int64(math.MinInt64)), le(1 << 63)},
		{"named int16", AppendKeyBytes(nil, shard(-3)), le(math.MaxUint64 - 2)},
		{"uint", AppendKeyBytes(nil, uint(7)), le(7)},
		{"uint8", AppendKeyBytes(nil, uint8(255)), le(255)},
		{"uint16", AppendKeyBytes(nil, uint16(65535)), le(65535)},
		{"uint32", AppendKeyBytes(nil, uint32(math.MaxUint32)), le(math.MaxUint32)},
		{"uint64", AppendKeyBytes(nil, uint64(math.MaxUint64)), le(math.MaxUint64)},
		{"named uint8", AppendKeyBytes(nil, seq(9)), le(9)},
		{"appends", AppendKeyBytes([]byte("x"), "y"), []byte("xy")},
	}
	for _, c := range cases {
		if !bytes.Equal(c.got, c.want) {
			t.Errorf("%s: AppendKeyBytes = %x, want %x", c.name, c.got, c.want)
		}
	}
}

// HashKey must equal Murmur3 of the canonical bytes for every key type,
// including named types (which take the reflection path).
func TestHashKeyMatchesCanonicalBytes(t *testing.T) {
	rng := rand.New(rand.NewPCG(testSeed(t), 1))
	check := func(name string, h uint32, b []byte) {
		t.Helper()
		if want := Murmur3(b, 0); h != want {
			t.Fatalf("%s: HashKey = %#08x, Murmur3(canonical %x) = %#08x", name, h, b, want)
		}
	}
	for n := 0; n < 2000; n++ {
		u := rng.Uint64()
		buf := make([]byte, rng.IntN(70))
		for i := range buf {
			buf[i] = byte(rng.Uint32())
		}
		s := string(buf)
		check("string", HashKey(s), AppendKeyBytes(nil, s))
		check("userID", HashKey(userID(s)), []byte(s))
		check("int", HashKey(int(u)), AppendKeyBytes(nil, int(u)))
		check("int8", HashKey(int8(u)), AppendKeyBytes(nil, int8(u)))
		check("int16", HashKey(int16(u)), AppendKeyBytes(nil, int16(u)))
		check("int32", HashKey(int32(u)), AppendKeyBytes(nil, int32(u)))
		check("int64", HashKey(int64(u)), AppendKeyBytes(nil, int64(u)))
		check("shard", HashKey(shard(u)), AppendKeyBytes(nil, int64(int16(u))))
		check("uint", HashKey(uint(u)), AppendKeyBytes(nil, uint(u)))
		check("uint8", HashKey(uint8(u)), AppendKeyBytes(nil, uint8(u)))
		check("uint16", HashKey(uint16(u)), AppendKeyBytes(nil, uint16(u)))
		check("uint32", HashKey(uint32(u)), AppendKeyBytes(nil, uint32(u)))
		check("uint64", HashKey(u), AppendKeyBytes(nil, u))
		check("seq", HashKey(seq(u)), AppendKeyBytes(nil, uint64(uint8(u))))
		if HashKey(s) != HashBytes(buf) {
			t.Fatalf("HashKey(%q) != HashBytes", s)
		}
		if g := KeyGroup(s, 128); g < 0 || g >= 128 {
			t.Fatalf("KeyGroup(%q, 128) = %d out of range", s, g)
		}
	}
	// Same bits, same hash: signed and unsigned agree on the canonical bytes.
	if HashKey(-1) != HashKey(uint64(math.MaxUint64)) {
		t.Error("HashKey(-1) != HashKey(MaxUint64)")
	}
}

func TestHashKeyDoesNotAllocate(t *testing.T) {
	var sink uint32
	s := "k000042"
	if n := testing.AllocsPerRun(100, func() { sink += HashKey(s) }); n != 0 {
		t.Errorf("HashKey(string) allocates %v times", n)
	}
	if n := testing.AllocsPerRun(100, func() { sink += HashKey(int64(42)) }); n != 0 {
		t.Errorf("HashKey(int64) allocates %v times", n)
	}
	if n := testing.AllocsPerRun(100, func() { sink += uint32(KeyGroup(s, 128)) }); n != 0 {
		t.Errorf("KeyGroup(string) allocates %v times", n)
	}
	buf := make([]byte, 0, 64)
	if n := testing.AllocsPerRun(100, func() { buf = AppendKeyBytes(buf[:0], s) }); n != 0 {
		t.Errorf("AppendKeyBytes(string) with room allocates %v times", n)
	}
	if n := testing.AllocsPerRun(100, func() { buf = AppendKeyBytes(buf[:0], 42) }); n != 0 {
		t.Errorf("AppendKeyBytes(int) with room allocates %v times", n)
	}
	_ = sink
}

func TestGroupOf(t *testing.T) {
	cases := []struct {
		hash uint32
		max  int
		want int
	}{
		{0, 1, 0},
		{math.MaxUint32, 1, 0},
		{129, 128, 1},
		{math.MaxUint32, 128, 127},
		{math.MaxUint32, 32768, 32767},
		{1000, 7, 6},
	}
	for _, c := range cases {
		if got := GroupOf(c.hash, c.max); got != c.want {
			t.Errorf("GroupOf(%d, %d) = %d, want %d", c.hash, c.max, got, c.want)
		}
	}
}

func BenchmarkHashKey7ByteString(b *testing.B) {
	keys := []string{"k000042", "k000043", "k999999", "user-17"}
	var sink uint32
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		sink += HashKey(keys[i&3])
	}
	_ = sink
}

func BenchmarkHashKeyInt64(b *testing.B) {
	var sink uint32
	b.ReportAllocs()
	for i := int64(0); b.Loop(); i++ {
		sink += HashKey(i)
	}
	_ = sink
}

func BenchmarkHashKeyNamedString(b *testing.B) {
	k := userID("k000042")
	var sink uint32
	b.ReportAllocs()
	for b.Loop() {
		sink += HashKey(k)
	}
	_ = sink
}
