package cli

import "testing"

func TestByteSizeFlag(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		bad  bool
	}{
		{in: "65536", want: 65536},
		{in: "64MB", want: 64_000_000},
		{in: "64MiB", want: 64 << 20},
		{in: "2 GB", want: 2_000_000_000},
		{in: "10kB", want: 10_000},
		{in: "0", want: 0},
		{in: "-1", bad: true},
		{in: "64XB", bad: true},
		{in: "MB", bad: true},
		{in: "9999999999GiB", bad: true},
	} {
		var b byteSize
		err := b.Set(tc.in)
		switch {
		case tc.bad && err == nil:
			t.Errorf("%q: accepted as %d, want an error", tc.in, b)
		case !tc.bad && err != nil:
			t.Errorf("%q: %v", tc.in, err)
		case !tc.bad && int64(b) != tc.want:
			t.Errorf("%q = %d, want %d", tc.in, b, tc.want)
		}
	}
}
