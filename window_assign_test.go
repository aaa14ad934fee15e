package weir

import (
	"slices"
	"testing"
	"time"
)

func TestWindowAssign(t *testing.T) {
	w := func(s, e int64) window { return window{s, e} }
	tests := []struct {
		name string
		spec WindowSpec
		ts   int64
		want []window
	}{
		{"tumbling at its start", Tumbling(10), 20, []window{w(20, 30)}},
		{"tumbling inside", Tumbling(10), 29, []window{w(20, 30)}},
		{"tumbling before the epoch", Tumbling(10), -1, []window{w(-10, 0)}},
		{"tumbling at zero", Tumbling(10), 0, []window{w(0, 10)}},
		{"sliding covers twice", Sliding(10, 5), 12, []window{w(5, 15), w(10, 20)}},
		{"sliding on a slide boundary", Sliding(10, 5), 10, []window{w(5, 15), w(10, 20)}},
		{"sliding thrice", Sliding(30, 10), 25, []window{w(0, 30), w(10, 40), w(20, 50)}},
		{"sliding with gaps between windows", Sliding(5, 10), 7, nil},
		{"sliding with gaps, inside one", Sliding(5, 10), 13, []window{w(10, 15)}},
		{"sliding negative", Sliding(10, 5), -3, []window{w(-10, 0), w(-5, 5)}},
		{"session", Session(7), 100, []window{w(100, 107)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.spec.assign(nil, tc.ts)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("assign(%d) = %v, want %v", tc.ts, got, tc.want)
			}
			for _, win := range got {
				if tc.ts < win.start || tc.ts >= win.end {
					t.Fatalf("window %v does not cover %d", win, tc.ts)
				}
			}
		})
	}
}

func TestWindowSpecValidate(t *testing.T) {
	bad := []WindowSpec{{}, Tumbling(0), Sliding(time.Second, 0), Sliding(-time.Second, time.Second), Session(0)}
	for _, s := range bad {
		if s.validate() == nil {
			t.Errorf("%+v accepted", s)
		}
	}
	for _, s := range []WindowSpec{Tumbling(time.Second), Sliding(time.Minute, time.Second), Session(time.Second).InProcessingTime()} {
		if err := s.validate(); err != nil {
			t.Errorf("%+v: %v", s, err)
		}
	}
}
