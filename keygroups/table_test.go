package keygroups

import (
	"errors"
	"slices"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

func TestContiguousRejectsBadParallelism(t *testing.T) {
	for _, c := range [][2]int{{0, 1}, {128, 0}, {128, 129}, {40000, 2}} {
		if _, err := Contiguous(c[0], c[1]); !errors.Is(err, ErrInvalidParallelism) {
			t.Errorf("Contiguous(%d, %d) error = %v, want ErrInvalidParallelism", c[0], c[1], err)
		}
	}
}

func TestTableGroupsOfAndCounts(t *testing.T) {
	tab, err := Contiguous(10, 3)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]int{{0, 1, 2, 3}, {4, 5, 6}, {7, 8, 9}}
	for i, w := range want {
		if got := tab.GroupsOf(i); !slices.Equal(got, w) {
			t.Errorf("GroupsOf(%d) = %v, want %v", i, got, w)
		}
	}
	if got := tab.Counts(); !slices.Equal(got, []int{4, 3, 3}) {
		t.Errorf("Counts() = %v", got)
	}
	if got := tab.GroupsOf(3); got != nil {
		t.Errorf("GroupsOf(3) = %v, want none", got)
	}
}

func TestTableValidate(t *testing.T) {
	good := func() *Table { tab, _ := Contiguous(8, 3); return tab }
	cases := []struct {
		name   string
		mutate func(*Table)
		want   error
	}{
		{"ok", func(*Table) {}, nil},
		{"short owners", func(t *Table) { t.Owners = t.Owners[:7] }, ErrInvalidTable},
		{"owner too large", func(t *Table) { t.Owners[0] = 3 }, ErrInvalidTable},
		{"negative owner", func(t *Table) { t.Owners[5] = -1 }, ErrInvalidTable},
		{"idle instance", func(t *Table) {
			for g := range t.Owners {
				t.Owners[g] = int32(g % 2)
			}
		}, ErrInvalidTable},
		{"p > max", func(t *Table) { t.Parallelism = 9 }, ErrInvalidParallelism},
		{"max 0", func(t *Table) { t.MaxParallelism = 0 }, ErrInvalidParallelism},
	}
	for _, c := range cases {
		tab := good()
		c.mutate(tab)
		err := tab.Validate()
		if c.want == nil && err != nil {
			t.Errorf("%s: Validate() = %v, want nil", c.name, err)
		}
		if c.want != nil && (!errors.Is(err, c.want) || !errors.Is(err, ErrInvalidTable)) {
			t.Errorf("%s: Validate() = %v, want %v and ErrInvalidTable", c.name, err, c.want)
		}
	}
	var nilTab *Table
	if err := nilTab.Validate(); !errors.Is(err, ErrInvalidTable) {
		t.Errorf("nil table: Validate() = %v", err)
	}
}

func TestTableCloneEqualMoved(t *testing.T) {
	a, _ := Contiguous(128, 4)
	b := a.Clone()
	if !a.Equal(b) || len(a.Moved(b)) != 0 {
		t.Fatal("clone differs from original")
	}
	b.Owners[5] = 3
	if a.Owners[5] != 0 {
		t.Fatal("Clone shares Owners with the original")
	}
	if a.Equal(b) {
		t.Fatal("Equal ignores an owner change")
	}
	if got := a.Moved(b); !slices.Equal(got, []int{5}) {
		t.Fatalf("Moved = %v, want [5]", got)
	}
	c := a.Clone()
	c.Parallelism = 5
	if a.Equal(c) {
		t.Fatal("Equal ignores Parallelism")
	}
	var n *Table
	if !n.Equal(nil) || a.Equal(nil) || n.Clone() != nil {
		t.Fatal("nil handling of Equal/Clone")
	}

	five, _ := Contiguous(128, 5)
	if got := len(a.Moved(five)); got != 62 {
		t.Fatalf("Flink contiguous 4→5 at max 128 moves %d groups, want 62", got)
	}
	short := &Table{MaxParallelism: 2, Parallelism: 1, Owners: []int32{0, 0}}
	long := &Table{MaxParallelism: 3, Parallelism: 1, Owners: []int32{0, 0, 0}}
	if got := short.Moved(long); !slices.Equal(got, []int{2}) {
		t.Fatalf("Moved across sizes = %v, want [2]", got)
	}
}

func TestTableMsgpackRoundTrip(t *testing.T) {
	tab, _ := Contiguous(128, 5)
	b, err := msgpack.Marshal(tab)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := msgpack.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"max", "p", "owners"} {
		if _, ok := m[k]; !ok {
			t.Errorf("msgpack encoding lacks field %q: %v", k, m)
		}
	}
	var back Table
	if err := msgpack.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !tab.Equal(&back) {
		t.Fatalf("round trip changed the table")
	}
}
