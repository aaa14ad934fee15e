package state

import (
	"flag"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

var seedFlag = flag.Uint64("state.seed", 0, "replay seed for randomised state tests (0: new seed)")

// model is the plain-Go reference for testTables: group -> key -> state.
type model struct {
	counts map[int]map[string]int64
	seen   map[int]map[string]map[string]bool
	buf    map[int]map[string][]string
}

func newModel() *model {
	return &model{counts: map[int]map[string]int64{}, seen: map[int]map[string]map[string]bool{}, buf: map[int]map[string][]string{}}
}

// cloneGroup deep-copies group g of m into a one-group model.
func (m *model) cloneGroup(g int) *model {
	c := newModel()
	c.counts[g] = map[string]int64{}
	maps.Copy(c.counts[g], m.counts[g])
	c.seen[g] = map[string]map[string]bool{}
	for k, inner := range m.seen[g] {
		c.seen[g][k] = maps.Clone(inner)
	}
	c.buf[g] = map[string][]string{}
	for k, l := range m.buf[g] {
		c.buf[g][k] = slices.Clone(l)
	}
	return c
}

func (m *model) setGroup(g int, from *model) {
	c := from.cloneGroup(g)
	m.counts[g], m.seen[g], m.buf[g] = c.counts[g], c.seen[g], c.buf[g]
}

// lens returns the number of keys with state per table in group g.
func (m *model) lens(g int) [3]int {
	n := [3]int{len(m.counts[g])}
	for _, inner := range m.seen[g] {
		if len(inner) > 0 {
			n[1]++
		}
	}
	for _, l := range m.buf[g] {
		if len(l) > 0 {
			n[2]++
		}
	}
	return n
}

// dump renders group g in the same form as testTables.dump.
func (m *model) dump(g int) string {
	var sb strings.Builder
	for _, k := range slices.Sorted(maps.Keys(m.counts[g])) {
		sb.WriteString("counts " + k + "=" + strconv.FormatInt(m.counts[g][k], 10) + "\n")
	}
	for _, k := range slices.Sorted(maps.Keys(m.seen[g])) {
		if len(m.seen[g][k]) == 0 {
			continue
		}
		for _, uk := range slices.Sorted(maps.Keys(m.seen[g][k])) {
			sb.WriteString("seen " + k + "/" + uk + "=" + map[bool]string{true: "t", false: "f"}[m.seen[g][k][uk]] + "\n")
		}
	}
	for _, k := range slices.Sorted(maps.Keys(m.buf[g])) {
		if len(m.buf[g][k]) == 0 {
			continue
		}
		sb.WriteString("buf " + k + "=" + strings.Join(m.buf[g][k], ",") + "\n")
	}
	return sb.String()
}

func testSeed(t *testing.T) uint64 {
	seed := *seedFlag
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (replay with -state.seed=%d)", seed, seed)
	return seed
}

// TestBackendRandomOpsAgainstModel applies random table operations, group
// snapshots, restores of older snapshots and group drops to a backend and to
// a plain-Go model, and demands the same state throughout; at the end every
// group is moved into a fresh backend in random order.
func TestBackendRandomOpsAgainstModel(t *testing.T) {
	const maxP = 8
	seed := testSeed(t)
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	tt := newTestTables(t, maxP)
	m := newModel()
	for g := range maxP {
		m.setGroup(g, newModel())
	}
	type saved struct {
		blob  []byte
		state *model
	}
	snaps := map[int]saved{}
	key := func() string { return "k" + strconv.Itoa(rng.IntN(6)) }
	// Half the time an op goes to the group and counts key touched last, so
	// the counts table's remembered slot is tested against every other op.
	lastG, lastK := 0, "k0"

	for step := range 3000 {
		g := rng.IntN(maxP)
		if rng.IntN(2) == 0 {
			g = lastG
		}
		key := key
		if rng.IntN(2) == 0 {
			key = func() string { return lastK }
		}
		switch op := rng.IntN(12); op {
		case 0, 1:
			// Read, then write the same key: the table's remembered slot must
			// never outlive a Delete, DropGroup or RestoreGroup.
			k, v := key(), rng.Int64N(1000)-500
			got, ok := tt.counts.Get(g, k)
			want, wantOK := m.counts[g][k]
			if got != want || ok != wantOK {
				t.Fatalf("step %d: Get(%d, %q) = %d, %t; want %d, %t", step, g, k, got, ok, want, wantOK)
			}
			tt.counts.Put(g, k, v)
			m.counts[g][k] = v
			lastG, lastK = g, k
		case 2:
			k := key()
			tt.counts.Delete(g, k)
			delete(m.counts[g], k)
		case 3, 4:
			k, uk, v := key(), "u"+strconv.Itoa(rng.IntN(4)), rng.IntN(2) == 0
			tt.seen.Put(g, k, uk, v)
			if m.seen[g][k] == nil {
				m.seen[g][k] = map[string]bool{}
			}
			m.seen[g][k][uk] = v
		case 5:
			k, uk := key(), "u"+strconv.Itoa(rng.IntN(4))
			tt.seen.Delete(g, k, uk)
			delete(m.seen[g][k], uk)
		case 6:
			k, v := key(), strconv.Itoa(rng.IntN(100))
			tt.buf.Add(g, k, v)
			m.buf[g][k] = append(m.buf[g][k], v)
		case 7:
			k := key()
			if rng.IntN(2) == 0 {
				tt.buf.Clear(g, k)
				delete(m.buf[g], k)
			} else {
				tt.seen.Clear(g, k)
				delete(m.seen[g], k)
			}
		case 8:
			blob, err := tt.b.SnapshotGroup(g)
			if err != nil {
				t.Fatalf("step %d: %v", step, err)
			}
			snaps[g] = saved{blob: blob, state: m.cloneGroup(g)}
		case 9, 10:
			s, ok := snaps[g]
			if !ok {
				continue
			}
			if err := tt.b.RestoreGroup(g, s.blob); err != nil {
				t.Fatalf("step %d: restore group %d: %v", step, g, err)
			}
			m.setGroup(g, s.state)
		case 11:
			tt.b.DropGroup(g)
			m.setGroup(g, newModel())
		}
		if got, want := tt.dump(g), m.dump(g); got != want {
			t.Fatalf("step %d group %d:\n got %q\nwant %q", step, g, got, want)
		}
		if got, want := [3]int{tt.counts.Len(g), tt.seen.Len(g), tt.buf.Len(g)}, m.lens(g); got != want {
			t.Fatalf("step %d group %d: Len of counts, seen, buf = %v, want %v", step, g, got, want)
		}
	}

	fresh := newTestTables(t, maxP)
	for _, g := range rng.Perm(maxP) {
		blob, err := tt.b.SnapshotGroup(g)
		if err != nil {
			t.Fatal(err)
		}
		if err := fresh.b.RestoreGroup(g, blob); err != nil {
			t.Fatal(err)
		}
	}
	for g := range maxP {
		if got, want := fresh.dump(g), m.dump(g); got != want {
			t.Fatalf("fresh backend group %d:\n got %q\nwant %q", g, got, want)
		}
	}
	if !slices.Equal(fresh.b.NonEmptyGroups(), tt.b.NonEmptyGroups()) {
		t.Fatalf("NonEmptyGroups %v, want %v", fresh.b.NonEmptyGroups(), tt.b.NonEmptyGroups())
	}
}
