package supervision

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/weirstream/weir/internal/task"
)

func TestNewCopiesRegions(t *testing.T) {
	regions := []Region{{ID: 0, Tasks: []task.ID{{Operator: "a", OperatorID: 4, Instance: 0}}}}
	s, err := New(Config{Regions: regions, Intensity: Intensity{MaxRestarts: 1, Window: time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	regions[0].Tasks[0].Operator = "changed"
	got := s.OnTaskFailed(task.ID{Operator: "a", Instance: 0}, "boom", 0)
	want := []Action{StopRegion{Region: 0, Tasks: []task.ID{{Operator: "a", OperatorID: 4, Instance: 0}}}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("OnTaskFailed = %v, want %v", got, want)
	}
	// The actions' task lists are copies too.
	got[0].(StopRegion).Tasks[0].Operator = "mutated"
	acts := s.Tick(0)
	if len(acts) != 1 || acts[0].(RestartRegion).Tasks[0].Operator != "a" {
		t.Fatalf("Tick = %v", acts)
	}
}

func TestFailJobNamesCanonicalTask(t *testing.T) {
	// The caller may report a task without its operator id; FailJob carries
	// the configured one.
	s, err := New(Config{
		Regions:   []Region{{ID: 5, Tasks: []task.ID{{Operator: "map", OperatorID: 2, Instance: 1}}}},
		Intensity: Intensity{},
	})
	if err != nil {
		t.Fatal(err)
	}
	acts := s.OnTaskFailed(task.ID{Operator: "map", Instance: 1}, "nil map", time.Second)
	if len(acts) != 2 {
		t.Fatalf("acts = %v", acts)
	}
	fj, ok := acts[1].(FailJob)
	if !ok || fj.Task != (task.ID{Operator: "map", OperatorID: 2, Instance: 1}) || fj.Cause != "nil map" {
		t.Fatalf("acts[1] = %#v", acts[1])
	}
	if !s.Failed() {
		t.Fatal("Failed() = false after FailJob")
	}
	if _, ok := s.NextRestart(); ok {
		t.Fatal("a restart is pending after FailJob")
	}
}

func TestInvalidSupervisorConfig(t *testing.T) {
	ok := Intensity{MaxRestarts: 1, Window: time.Second}
	bad := Intensity{MaxRestarts: 1}
	one := []Region{{ID: 0, Tasks: []task.ID{{Operator: "a"}}}}
	for i, cfg := range []Config{
		{Intensity: ok},
		{Regions: one, Intensity: bad},
		{Regions: one, Intensity: ok, JobIntensity: &bad},
		{Regions: []Region{{ID: 0}}, Intensity: ok},
		{Regions: []Region{{ID: -1, Tasks: one[0].Tasks}}, Intensity: ok},
		{Regions: []Region{one[0], {ID: 0, Tasks: []task.ID{{Operator: "b"}}}}, Intensity: ok},
	} {
		if _, err := New(cfg); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("config %d: %v, want ErrInvalidConfig", i, err)
		}
	}
}

func TestRegionsFromPlanDriveSupervisor(t *testing.T) {
	// End to end through Regions: a failure in one forward pipeline stops
	// only its instance's region.
	j := buildJob(t, "src:2 map:2 sink:2", "src>map:forward map>sink:forward")
	s, err := New(Config{Regions: Regions(j), Intensity: Intensity{MaxRestarts: 3, Window: time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	r, _ := RegionOf(Regions(j), "map", 1)
	acts := s.OnTaskFailed(task.ID{Operator: "map", Instance: 1}, "boom", 0)
	want := []Action{StopRegion{Region: r, Tasks: []task.ID{
		{Operator: "src", OperatorID: 0, Instance: 1},
		{Operator: "map", OperatorID: 1, Instance: 1},
		{Operator: "sink", OperatorID: 2, Instance: 1},
	}}}
	if !reflect.DeepEqual(acts, want) {
		t.Fatalf("acts = %v, want %v", acts, want)
	}
	if st, _ := s.State(0); st != Running {
		t.Fatalf("region 0 is %v", st)
	}
}

// FuzzSupervisor feeds arbitrary event sequences and checks the invariants
// of the randomised test's model.
func FuzzSupervisor(f *testing.F) {
	f.Add(uint64(1))
	f.Add(uint64(42))
	f.Fuzz(func(t *testing.T, seed uint64) { _ = runRandom(t, seed) })
}

func BenchmarkSupervisorFailRestart(b *testing.B) {
	var regions []Region
	for i := range 64 {
		regions = append(regions, Region{ID: i, Tasks: []task.ID{{Operator: "a", Instance: i}, {Operator: "b", Instance: i}}})
	}
	s, err := New(Config{Regions: regions, Intensity: Intensity{MaxRestarts: 1 << 20, Window: time.Second}})
	if err != nil {
		b.Fatal(err)
	}
	var now time.Duration
	b.ReportAllocs()
	for b.Loop() {
		now += time.Second
		i := int(now/time.Second) % 64
		s.OnTaskFailed(task.ID{Operator: "a", Instance: i}, "boom", now)
		s.Tick(now)
		if acts := s.OnRegionRestarted(i, now); acts != nil {
			b.Fatal(acts)
		}
	}
}
