package supervision

import (
	"strconv"
	"strings"
	"testing"

	"github.com/weirstream/weir/internal/plan"
)

// buildJob makes a plan from "name:parallelism ..." (operator ids in order)
// and "from>to:partitioner ..." with partitioners forward, rebalance,
// shuffle, broadcast and hash.
func buildJob(t testing.TB, ops, edges string) *plan.Job {
	t.Helper()
	j := &plan.Job{Name: "test", MaxParallelism: 128}
	byName := map[string]*plan.Operator{}
	for i, w := range strings.Fields(ops) {
		name, p, ok := strings.Cut(w, ":")
		n, err := strconv.Atoi(p)
		if !ok || err != nil {
			t.Fatalf("operator %q, want name:parallelism", w)
		}
		op := &plan.Operator{ID: i, Name: name, Parallelism: n}
		byName[name] = op
		j.Operators = append(j.Operators, op)
	}
	parts := map[string]plan.Partitioner{
		"forward": plan.Forward, "rebalance": plan.Rebalance, "shuffle": plan.Shuffle,
		"broadcast": plan.Broadcast, "hash": plan.KeyGroupHash,
	}
	for i, w := range strings.Fields(edges) {
		ends, part, _ := strings.Cut(w, ":")
		from, to, _ := strings.Cut(ends, ">")
		p, ok := parts[part]
		if byName[from] == nil || byName[to] == nil || !ok {
			t.Fatalf("edge %q, want from>to:partitioner", w)
		}
		e := &plan.Edge{ID: i, From: byName[from], To: byName[to], Partitioner: p}
		e.From.Outputs = append(e.From.Outputs, e)
		e.To.Inputs = append(e.To.Inputs, e)
		j.Edges = append(j.Edges, e)
	}
	return j
}

// formatRegions renders regions as "op[i],op[i];op[i]" and checks ids.
func formatRegions(t *testing.T, regions []Region) string {
	t.Helper()
	var parts []string
	for i, r := range regions {
		if r.ID != i {
			t.Errorf("region %d has ID %d", i, r.ID)
		}
		parts = append(parts, joinTasks(r.Tasks))
	}
	return strings.ReplaceAll(strings.Join(parts, ";"), " ", ",")
}

func TestRegions(t *testing.T) {
	tests := []struct {
		name, ops, edges, want string
	}{
		{
			name:  "forward only p=3",
			ops:   "src:3 map:3 sink:3",
			edges: "src>map:forward map>sink:forward",
			want:  "src[0],map[0],sink[0];src[1],map[1],sink[1];src[2],map[2],sink[2]",
		},
		{
			name:  "one all-to-all edge merges everything reachable",
			ops:   "src:3 map:3 sink:3",
			edges: "src>map:forward map>sink:hash",
			want:  "src[0],src[1],src[2],map[0],map[1],map[2],sink[0],sink[1],sink[2]",
		},
		{
			name:  "all-to-all at the source side",
			ops:   "src:2 map:2 sink:2",
			edges: "src>map:rebalance map>sink:forward",
			want:  "src[0],src[1],map[0],map[1],sink[0],sink[1]",
		},
		{
			name:  "two independent pipelines stay separate",
			ops:   "a:2 b:1 c:1 d:2",
			edges: "a>b:shuffle c>d:broadcast",
			want:  "a[0],a[1],b[0];c[0],d[0],d[1]",
		},
		{
			name:  "two forward pipelines in one job",
			ops:   "a:2 b:2 c:1 d:1",
			edges: "a>b:forward c>d:forward",
			want:  "a[0],b[0];a[1],b[1];c[0],d[0]",
		},
		{
			name: "mixed: forward chains joined by a union into a hash edge",
			// s1 → m1 (forward) and s2 → m2 (forward) both feed k by hash;
			// a separate forward pipeline x → y stays per instance.
			ops:   "s1:2 m1:2 s2:1 m2:1 k:2 x:2 y:2",
			edges: "s1>m1:forward s2>m2:forward m1>k:hash m2>k:hash x>y:forward",
			want:  "s1[0],s1[1],m1[0],m1[1],s2[0],m2[0],k[0],k[1];x[0],y[0];x[1],y[1]",
		},
		{
			name:  "parallelism 1 everywhere is one region per pipeline",
			ops:   "src:1 sink:1",
			edges: "src>sink:rebalance",
			want:  "src[0],sink[0]",
		},
		{
			name:  "fan-out of forward edges keeps instances apart",
			ops:   "src:2 a:2 b:2",
			edges: "src>a:forward src>b:forward",
			want:  "src[0],a[0],b[0];src[1],a[1],b[1]",
		},
		{
			name:  "forward with unequal parallelism is treated as all-to-all",
			ops:   "src:2 sink:1",
			edges: "src>sink:forward",
			want:  "src[0],src[1],sink[0]",
		},
		{
			name:  "an operator with no edges is its own regions",
			ops:   "lonely:2",
			edges: "",
			want:  "lonely[0];lonely[1]",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := buildJob(t, tt.ops, tt.edges)
			if got := formatRegions(t, Regions(j)); got != tt.want {
				t.Errorf("Regions:\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestRegionsOrderByOperatorID(t *testing.T) {
	// Operators listed out of id order: tasks and regions still follow ids.
	j := buildJob(t, "a:2 b:2 c:2", "a>b:forward c>b:forward")
	j.Operators[0].ID, j.Operators[1].ID, j.Operators[2].ID = 7, 3, 1
	want := "c[0],b[0],a[0];c[1],b[1],a[1]"
	if got := formatRegions(t, Regions(j)); got != want {
		t.Errorf("Regions:\n got %s\nwant %s", got, want)
	}
	r := Regions(j)
	if r[0].Tasks[0].OperatorID != 1 || r[0].Tasks[2].OperatorID != 7 {
		t.Errorf("operator ids not carried: %+v", r[0].Tasks)
	}
}

func TestRegionsEdgesOnlyOnOperators(t *testing.T) {
	// Edges reachable only through Inputs/Outputs still connect.
	j := buildJob(t, "a:2 b:2", "a>b:shuffle")
	j.Edges = nil
	if got, want := formatRegions(t, Regions(j)), "a[0],a[1],b[0],b[1]"; got != want {
		t.Errorf("Regions = %s, want %s", got, want)
	}
	if Regions(nil) != nil {
		t.Errorf("Regions(nil) is not nil")
	}
}

func TestRegionOf(t *testing.T) {
	regions := Regions(buildJob(t, "a:2 b:2 c:1 d:1", "a>b:forward c>d:forward"))
	tests := []struct {
		op   string
		inst int
		want int
		ok   bool
	}{
		{"a", 0, 0, true}, {"b", 0, 0, true}, {"a", 1, 1, true}, {"b", 1, 1, true},
		{"d", 0, 2, true}, {"c", 0, 2, true}, {"a", 2, 0, false}, {"zz", 0, 0, false},
	}
	for _, tt := range tests {
		got, ok := RegionOf(regions, tt.op, tt.inst)
		if got != tt.want || ok != tt.ok {
			t.Errorf("RegionOf(%s/%d) = %d, %v; want %d, %v", tt.op, tt.inst, got, ok, tt.want, tt.ok)
		}
	}
}

func BenchmarkRegions(b *testing.B) {
	for _, p := range []int{4, 128} {
		b.Run("p="+strconv.Itoa(p), func(b *testing.B) {
			spec := "src:P m1:P m2:P m3:P sink:P"
			j := buildJob(b, strings.ReplaceAll(spec, "P", strconv.Itoa(p)),
				"src>m1:forward m1>m2:forward m2>m3:forward m3>sink:forward")
			b.ReportAllocs()
			for b.Loop() {
				Regions(j)
			}
		})
	}
}
