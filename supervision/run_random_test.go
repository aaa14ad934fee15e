package supervision

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/weirstream/weir/internal/task"
	"github.com/weirstream/weir/internal/testseed"
)

// TestRandomRunState drives a Supervisor as the job actor would (spawning
// and stopping tasks, ending them late, twice or with a stale incarnation,
// losing their nodes, writing manifests, readying respawned tasks) and
// checks at every step that a region restarts only once every task it
// stopped has ended and no manifest is being written, that StopRegion lists
// exactly the region's running tasks, and at the end that every region runs
// again once the stopped tasks end (liveness: no region waits forever).
func TestRandomRunState(t *testing.T) {
	var restarts int
	replayed := testseed.Run(t, 300, 300, func(seed uint64) { restarts += runRandomRunState(t, seed) })
	if !replayed && restarts == 0 {
		t.Fatal("no region restarted in any run")
	}
}

// shell is the test's job actor: which incarnation of each task runs, which
// of them it is stopping, and whether a manifest is being written.
type shell struct {
	t        *testing.T
	where    string
	rng      *rand.Rand
	s        *Supervisor
	regionOf map[task.ID]int
	tasks    map[int][]task.ID
	gen      map[task.ID]int
	live     map[task.ID]bool
	stopping map[task.ID]bool
	writing  bool
	failed   bool
	restarts int
	now      time.Duration
}

func (sh *shell) fatalf(format string, args ...any) {
	sh.t.Helper()
	sh.t.Fatalf("%s: %s", sh.where, fmt.Sprintf(format, args...))
}

// carryOut checks and performs the actions.
func (sh *shell) carryOut(event string, acts []Action) {
	sh.t.Helper()
	for _, act := range acts {
		switch act := act.(type) {
		case StopRegion:
			var want []task.ID
			for _, tk := range sh.tasks[act.Region] {
				if sh.live[tk] {
					want = append(want, tk)
				}
			}
			if !slices.Equal(act.Alive, want) {
				sh.fatalf("%s: %v, want alive %v", event, act, want)
			}
			for _, tk := range act.Alive {
				sh.stopping[tk] = true
			}
		case RestartRegion:
			for _, tk := range act.Tasks {
				if sh.live[tk] {
					sh.fatalf("%s: %v while %v still runs", event, act, tk)
				}
			}
			if sh.writing {
				sh.fatalf("%s: %v while a manifest is being written", event, act)
			}
			sh.restarts++
			sh.spawn(act)
		case RegionReady:
			for _, tk := range act.Tasks {
				if !sh.live[tk] {
					sh.fatalf("%s: %v but %v does not run", event, act, tk)
				}
			}
		case StopLocally:
			if !sh.stopping[act.Task] {
				sh.fatalf("%s: %v for a task not being stopped", event, act)
			}
		case FailJob:
			sh.failed = true
		case Ignored, RecordRecovery:
		default:
			sh.fatalf("%s: unexpected %v", event, act)
		}
	}
}

// spawn starts a restarted region's tasks; now and then a spawn fails
// midway, which the actor reports as a failed restore.
func (sh *shell) spawn(act RestartRegion) {
	for i, tk := range act.Tasks {
		if sh.rng.IntN(10) == 0 && i > 0 {
			sh.carryOut("restore failed", sh.s.OnRestoreFailed(act.Region, "spawn failed", sh.now))
			return
		}
		sh.gen[tk]++
		sh.live[tk] = true
		sh.s.OnTaskStarted(tk, sh.gen[tk])
	}
}

// end ends a running task: expected when it is being stopped.
func (sh *shell) end(tk task.ID) {
	sh.t.Helper()
	stopping := sh.stopping[tk]
	sh.live[tk], sh.stopping[tk] = false, false
	acts, end := sh.s.OnTaskEnded(tk, sh.gen[tk])
	event := fmt.Sprintf("end %v", tk)
	switch {
	case stopping && end != EndStopped, !stopping && end != EndUnexpected:
		sh.fatalf("%s (stopping %v): %v", event, stopping, end)
	}
	sh.carryOut(event, acts)
	if end == EndUnexpected {
		sh.report(tk, "stopped from outside")
	}
}

// report reports a task failure as the actor does.
func (sh *shell) report(tk task.ID, cause string) {
	sh.t.Helper()
	r := sh.regionOf[tk]
	if st, _ := sh.s.State(r); st == Restoring {
		sh.carryOut("restore failed", sh.s.OnRestoreFailed(r, cause, sh.now))
		return
	}
	sh.carryOut("fail "+tk.String(), sh.s.OnTaskFailed(tk, cause, sh.now))
}

func (sh *shell) pick(ok func(task.ID) bool) (task.ID, bool) {
	ts := sh.all(ok)
	if len(ts) == 0 {
		return task.ID{}, false
	}
	return ts[sh.rng.IntN(len(ts))], true
}

// all lists the tasks for which ok holds, in order.
func (sh *shell) all(ok func(task.ID) bool) []task.ID {
	var ts []task.ID
	for tk := range sh.regionOf {
		if ok(tk) {
			ts = append(ts, tk)
		}
	}
	slices.SortFunc(ts, compareTasks)
	return ts
}

func runRandomRunState(t *testing.T, seed uint64) int {
	rng := rand.New(rand.NewPCG(seed, ^seed))
	intensity := Intensity{MaxRestarts: 3 + rng.IntN(5), Window: time.Duration(1+rng.IntN(20)) * time.Second,
		Backoff: Backoff{Initial: time.Second, Max: 4 * time.Second, Multiplier: 2}}
	cfg := Config{Intensity: intensity}
	sh := &shell{t: t, rng: rng, where: fmt.Sprintf("seed %d (replay: go test -run TestRandomRunState ./supervision -seed=%d)", seed, seed),
		regionOf: map[task.ID]int{}, tasks: map[int][]task.ID{}, gen: map[task.ID]int{}, live: map[task.ID]bool{}, stopping: map[task.ID]bool{}}
	for r := range 1 + rng.IntN(3) {
		reg := Region{ID: r}
		for i := range 1 + rng.IntN(3) {
			tk := task.ID{Operator: fmt.Sprintf("op%d", i), OperatorID: i, Instance: r}
			reg.Tasks = append(reg.Tasks, tk)
			sh.regionOf[tk] = r
		}
		cfg.Regions = append(cfg.Regions, reg)
		sh.tasks[r] = reg.Tasks
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatalf("%s: %v", sh.where, err)
	}
	sh.s = s
	for tk := range sh.regionOf {
		sh.live[tk] = true
		s.OnTaskStarted(tk, 0)
	}
	for step := 0; step < 300 && !sh.failed; step++ {
		sh.now += time.Duration(rng.IntN(4)) * 500 * time.Millisecond
		switch r := rng.IntN(100); {
		case r < 15:
			if tk, ok := sh.pick(func(tk task.ID) bool { return sh.live[tk] && !sh.stopping[tk] }); ok {
				sh.report(tk, "boom")
			}
		case r < 40:
			if tk, ok := sh.pick(func(tk task.ID) bool { return sh.stopping[tk] }); ok {
				sh.end(tk)
			}
		case r < 45:
			if tk, ok := sh.pick(func(tk task.ID) bool { return sh.live[tk] && !sh.stopping[tk] }); ok {
				sh.end(tk) // stopped from outside
			}
		case r < 50:
			tk, _ := sh.pick(func(task.ID) bool { return true })
			if acts, end := s.OnTaskEnded(tk, sh.gen[tk]-1-rng.IntN(2)); end != EndStale {
				sh.fatalf("stale end of %v: %v %v", tk, acts, end)
			}
		case r < 55:
			if tk, ok := sh.pick(func(tk task.ID) bool { return sh.live[tk] }); ok {
				sh.carryOut("node lost", s.OnNodeLost(tk))
			}
		case r < 62:
			if !sh.writing {
				sh.writing = true
				s.OnManifestWriteStarted()
			}
		case r < 70:
			if sh.writing {
				sh.writing = false
				sh.carryOut("written", s.OnManifestWriteEnded())
			}
		case r < 85:
			if tk, ok := sh.pick(func(tk task.ID) bool { st, _ := s.State(sh.regionOf[tk]); return sh.live[tk] && st == Restoring }); ok {
				acts, _ := s.OnTaskReady(tk, sh.now)
				sh.carryOut("ready", acts)
			}
		default:
			sh.carryOut("tick", s.Tick(sh.now))
		}
	}
	if sh.failed {
		return sh.restarts
	}
	// Liveness: once stopped tasks end, writes end and time passes, every
	// region runs again.
	for round := 0; round < 10; round++ {
		for _, tk := range sh.all(func(tk task.ID) bool { return sh.stopping[tk] }) {
			if sh.stopping[tk] {
				sh.end(tk)
			}
		}
		if sh.writing {
			sh.writing = false
			sh.carryOut("written", s.OnManifestWriteEnded())
		}
		sh.now += time.Hour
		sh.carryOut("tick", s.Tick(sh.now))
		for _, tk := range sh.all(func(task.ID) bool { return true }) {
			if st, _ := s.State(sh.regionOf[tk]); st == Restoring && sh.live[tk] {
				acts, _ := s.OnTaskReady(tk, sh.now)
				sh.carryOut("ready", acts)
			}
		}
		if !s.Restarting() || sh.failed {
			return sh.restarts
		}
	}
	for r := range len(sh.tasks) {
		if st, _ := s.State(r); st != Running {
			sh.fatalf("region %d still not running: %s", r, s.RunState(r))
		}
	}
	return sh.restarts
}
