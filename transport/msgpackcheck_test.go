package transport

import (
	"bytes"
	"strings"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

func TestCheckMsgpackAcceptsEncoderOutput(t *testing.T) {
	values := []any{
		nil, true, false, 0, 127, -1, -32, -33, 128, 1 << 16, 1 << 40, -1 << 40, uint64(1<<64 - 1),
		float32(1.5), 2.5, "", "short", strings.Repeat("s", 40), strings.Repeat("m", 300), strings.Repeat("l", 70000),
		[]byte{}, []byte{1, 2, 3}, bytes.Repeat([]byte{7}, 300), bytes.Repeat([]byte{7}, 70000),
		[]any{}, []any{1, "a", nil}, make([]any, 20), make([]any, 70000),
		map[string]any{}, map[string]any{"k": []any{1, map[string]any{"x": 2}}},
		map[int]string{1: "a", 2: "b"}, func() map[int]int {
			m := make(map[int]int)
			for i := range 20 {
				m[i] = i
			}
			return m
		}(),
		msgpack.RawMessage{0xd4, 0x01, 0x02},                                                 // fixext1
		msgpack.RawMessage{0xd8, 0x01, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, // fixext16
		msgpack.RawMessage{0xc7, 0x02, 0x05, 0xaa, 0xbb},                                     // ext8
	}
	for _, v := range values {
		b := mustPack(t, v)
		if err := CheckMsgpack(b); err != nil {
			t.Errorf("CheckMsgpack(% x…) for %T: %v", b[:min(len(b), 8)], v, err)
		}
	}
}

func TestCheckMsgpackRejects(t *testing.T) {
	nested := func(depth int) []byte { return append(bytes.Repeat([]byte{0x91}, depth), 0x01) }
	if err := CheckMsgpack(nested(maxPayloadDepth)); err != nil {
		t.Errorf("depth %d: %v", maxPayloadDepth, err)
	}
	tests := []struct {
		name string
		b    []byte
		want string
	}{
		{"empty", nil, "truncated"},
		{"never used code", []byte{0xc1}, "invalid code 0xc1"},
		{"array32 claims 4G", []byte{0xdd, 0xff, 0xff, 0xff, 0xff}, "declares 4294967295 values"},
		{"map32 claims 4G", []byte{0xdf, 0xff, 0xff, 0xff, 0xff}, "declares 8589934590 values"},
		{"str32 claims 4G", []byte{0xdb, 0xff, 0xff, 0xff, 0xff}, "needs 4294967295 bytes"},
		{"ext32 claims 4G", []byte{0xc9, 0xff, 0xff, 0xff, 0xff}, "needs 4294967296 bytes"},
		{"array16 header cut", []byte{0xdc, 0x00}, "length of code 0xdc"},
		{"fixarray short", []byte{0x92, 0x01}, "declares 2 values, only 1"},
		{"fixstr short", []byte{0xa3, 'a', 'b'}, "needs 3 bytes, 2 left"},
		{"uint64 short", []byte{0xcf, 0, 0}, "needs 8 bytes"},
		{"fixext16 short", []byte{0xd8, 1, 2}, "needs 17 bytes"},
		{"map missing value", []byte{0x81, 0xa1, 'k'}, "value expected at byte 3 of 3"},
		{"truncated inside nested", []byte{0x92, 0x91, 0xa2, 'x'}, "truncated"},
		{"two values", []byte{0x01, 0x02}, "1 trailing bytes"},
		{"too deep", nested(maxPayloadDepth + 1), "nested deeper than 100"},
	}
	for _, tt := range tests {
		err := CheckMsgpack(tt.b)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: CheckMsgpack(% x) = %v, want error containing %q", tt.name, tt.b, err, tt.want)
		}
	}
}
