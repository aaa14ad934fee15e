package supervision

import (
	"fmt"
	"github.com/weirstream/weir/internal/task"
	"github.com/weirstream/weir/internal/testseed"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
)

// TestRandomRuns drives a Supervisor with random task failures (of known,
// unknown and already stopped tasks), restore results, restart reports and
// ticks, and checks every answer against an independent model of the rules.
func TestRandomRuns(t *testing.T) {
	var total simStats
	replayed := testseed.Run(t, 300, 300, func(seed uint64) {
		st := runRandom(t, seed)
		total.failJobs += st.failJobs
		total.jobRestarts += st.jobRestarts
		total.regionRestarts += st.regionRestarts
		total.restoreFailures += st.restoreFailures
	})
	if replayed {
		return
	}
	t.Logf("%+v", total)
	if total.failJobs == 0 || total.jobRestarts == 0 || total.regionRestarts == 0 || total.restoreFailures == 0 {
		t.Fatalf("runs too tame: %+v", total)
	}
}

// simStats counts what a run exercised.
type simStats struct {
	failJobs, jobRestarts, regionRestarts, restoreFailures int
}

// simModel is what the test expects, kept independently of the Supervisor:
// region states, restart times per region and for the job (OTP windows), the
// original failure of each stopped region, and whether the job failed.
type simModel struct {
	t     *testing.T
	where string
	cfg   Config
	jobI  Intensity
	now   time.Duration

	state    map[int]RegionState
	tasks    map[int][]task.ID
	regTimes map[int][]time.Duration
	jobTimes []time.Duration
	origin   map[int]FailJob // Task and Cause of the failure that stopped it
	stopAt   map[int]time.Duration
	failed   bool
	failJobs int
	stats    simStats
}

func (m *simModel) fatalf(format string, args ...any) {
	m.t.Helper()
	m.t.Fatalf("%s (t=%v): %s", m.where, m.now, fmt.Sprintf(format, args...))
}

func inWindow(times []time.Duration, now, w time.Duration) int {
	n := 0
	for _, at := range times {
		if now-at <= w {
			n++
		}
	}
	return n
}

func maxDelay(b Backoff) time.Duration {
	if b.Initial <= 0 {
		return 0
	}
	return b.Max
}

// expectIgnored asserts a single Ignored answer.
func (m *simModel) expectIgnored(event string, acts []Action) {
	m.t.Helper()
	if len(acts) != 1 {
		m.fatalf("%s: %v, want one Ignored", event, acts)
	}
	if _, ok := acts[0].(Ignored); !ok {
		m.fatalf("%s: %v, want Ignored", event, acts)
	}
}

// failure checks the answer to an accepted failure of region r whose
// original failure is origin, and updates the model.
func (m *simModel) failure(event string, r int, origin FailJob, acts []Action, s *Supervisor) {
	m.t.Helper()
	m.origin[r] = origin
	if len(acts) == 0 || !reflect.DeepEqual(acts[0], StopRegion{Region: r, Tasks: m.tasks[r]}) {
		m.fatalf("%s: %v, want StopRegion(%d) first", event, acts, r)
	}
	m.state[r], m.stopAt[r] = Stopped, m.now
	jobEsc := inWindow(m.jobTimes, m.now, m.jobI.Window)+1 > m.jobI.MaxRestarts
	regEsc := inWindow(m.regTimes[r], m.now, m.cfg.Intensity.Window)+1 > m.cfg.Intensity.MaxRestarts
	switch {
	case jobEsc:
		if len(acts) != 2 {
			m.fatalf("%s: %v, want StopRegion and FailJob", event, acts)
		}
		fj, ok := acts[1].(FailJob)
		if !ok || fj.Task != origin.Task || fj.Cause != origin.Cause {
			m.fatalf("%s: %v, want FailJob(%v, %q)", event, acts[1], origin.Task, origin.Cause)
		}
		m.failed = true
		m.failJobs++
		m.stats.failJobs++
		return
	case regEsc:
		var want []Action
		for _, cr := range m.cfg.Regions {
			if cr.ID != r && m.state[cr.ID] != Stopped {
				want = append(want, StopRegion{Region: cr.ID, Tasks: m.tasks[cr.ID]})
			}
		}
		if !reflect.DeepEqual(acts[1:], want) && !(len(want) == 0 && len(acts) == 1) {
			m.fatalf("%s: escalated region %d: %v, want StopRegion(%d) then %v", event, r, acts, r, want)
		}
		m.stats.jobRestarts++
		for id := range m.state {
			m.state[id], m.stopAt[id] = Stopped, m.now
			m.regTimes[id] = nil
			m.origin[id] = origin
		}
	default:
		if len(acts) != 1 {
			m.fatalf("%s: %v, want only StopRegion(%d)", event, acts, r)
		}
		m.regTimes[r] = append(m.regTimes[r], m.now)
		m.stats.regionRestarts++
	}
	m.jobTimes = append(m.jobTimes, m.now)
	// The restart is scheduled within the backoff bounds.
	at, ok := s.NextRestart()
	lo := min(m.cfg.Intensity.Backoff.Initial, m.jobI.Backoff.Initial)
	hi := max(maxDelay(m.cfg.Intensity.Backoff), maxDelay(m.jobI.Backoff))
	if !ok || at > m.now+hi {
		m.fatalf("%s: NextRestart() = %v, %v; want at most %v", event, at, ok, m.now+hi)
	}
	for id, st := range m.state {
		if st == Stopped && m.stopAt[id] == m.now {
			if got := s.byID[id].restartAt; got < m.now+lo || got > m.now+hi {
				m.fatalf("%s: region %d restarts at %v, want within [%v, %v]", event, id, got, m.now+lo, m.now+hi)
			}
		}
	}
}

func (m *simModel) tick(acts []Action, next time.Duration, pending bool, s *Supervisor) {
	m.t.Helper()
	if m.failed {
		if len(acts) != 0 {
			m.fatalf("tick after FailJob: %v", acts)
		}
		return
	}
	due := pending && next <= m.now
	if due != (len(acts) > 0) {
		m.fatalf("tick: %v with NextRestart %v, %v", acts, next, pending)
	}
	last := -1
	for _, a := range acts {
		rr, ok := a.(RestartRegion)
		if !ok {
			m.fatalf("tick: %v", a)
		}
		if m.state[rr.Region] != Stopped {
			m.fatalf("tick: %v for a region that is %v (no failure since its last restart)", rr, m.state[rr.Region])
		}
		if rr.Attempt < 1 || !reflect.DeepEqual(rr.Tasks, m.tasks[rr.Region]) {
			m.fatalf("tick: %v", rr)
		}
		idx := -1
		for i, cr := range m.cfg.Regions {
			if cr.ID == rr.Region {
				idx = i
			}
		}
		if idx <= last {
			m.fatalf("tick: restarts out of config order: %v", acts)
		}
		last = idx
		if m.now-m.stopAt[rr.Region] < min(m.cfg.Intensity.Backoff.Initial, m.jobI.Backoff.Initial) {
			m.fatalf("tick: %v only %v after its stop", rr, m.now-m.stopAt[rr.Region])
		}
		m.state[rr.Region] = Restoring
	}
	if at, ok := s.NextRestart(); ok && at <= m.now {
		m.fatalf("tick: NextRestart() = %v is not after now", at)
	}
}

func randomIntensity(rng *rand.Rand) Intensity {
	i := Intensity{MaxRestarts: rng.IntN(5), Window: time.Duration(1+rng.IntN(30)) * time.Second}
	if rng.IntN(3) > 0 {
		init := time.Duration(1+rng.IntN(3000)) * time.Millisecond
		i.Backoff = Backoff{Initial: init, Max: init + time.Duration(rng.IntN(10))*time.Second, Multiplier: 1 + rng.Float64()*2}
	}
	return i
}

func runRandom(t *testing.T, seed uint64) simStats {
	rng := rand.New(rand.NewPCG(seed, ^seed))
	cfg := Config{Intensity: randomIntensity(rng)}
	if rng.IntN(2) == 0 {
		ji := randomIntensity(rng)
		ji.MaxRestarts += 3
		cfg.JobIntensity = &ji
	}
	var all []task.ID
	for r := range 1 + rng.IntN(4) {
		reg := Region{ID: 10 + 3*r} // ids need not be indexes
		for i := range 1 + rng.IntN(3) {
			tk := task.ID{Operator: fmt.Sprintf("op%d", i), OperatorID: i, Instance: r}
			reg.Tasks = append(reg.Tasks, tk)
			all = append(all, tk)
		}
		cfg.Regions = append(cfg.Regions, reg)
	}
	where := fmt.Sprintf("seed %d (replay: go test -run TestRandomRuns ./supervision -seed=%d)", seed, seed)
	s, err := New(cfg)
	if err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	m := &simModel{
		t: t, where: where, cfg: cfg, jobI: cfg.jobIntensity(),
		state: map[int]RegionState{}, tasks: map[int][]task.ID{}, regTimes: map[int][]time.Duration{},
		origin: map[int]FailJob{}, stopAt: map[int]time.Duration{},
	}
	for _, r := range cfg.Regions {
		m.state[r.ID], m.tasks[r.ID] = Running, r.Tasks
	}
	regionOf := func(tk task.ID) int { id, _ := RegionOf(cfg.Regions, tk.Operator, tk.Instance); return id }
	randomRegion := func() int {
		if rng.IntN(20) == 0 {
			return 99 // unknown
		}
		return cfg.Regions[rng.IntN(len(cfg.Regions))].ID
	}

	for step := range 400 {
		m.now += time.Duration(rng.IntN(5)) * 500 * time.Millisecond // coarse: hits window edges exactly
		switch r := rng.IntN(100); {
		case r < 30:
			tk := all[rng.IntN(len(all))]
			if rng.IntN(20) == 0 {
				tk = task.ID{Operator: "stranger", Instance: 0}
			}
			cause := fmt.Sprintf("cause-%d", step)
			event := fmt.Sprintf("fail %v %s", tk, cause)
			acts := s.OnTaskFailed(task.ID{Operator: tk.Operator, Instance: tk.Instance}, cause, m.now)
			id, known := RegionOf(cfg.Regions, tk.Operator, tk.Instance)
			if m.failed || !known || m.state[id] != Running {
				m.expectIgnored(event, acts)
				continue
			}
			m.failure(event, regionOf(tk), FailJob{Task: tk, Cause: cause}, acts, s)
		case r < 40:
			id := randomRegion()
			event := fmt.Sprintf("restore-failed %d", id)
			acts := s.OnRestoreFailed(id, "corrupt", m.now)
			if m.failed || m.state[id] != Restoring {
				m.expectIgnored(event, acts)
				continue
			}
			m.stats.restoreFailures++
			m.failure(event, id, m.origin[id], acts, s)
		case r < 70:
			id := randomRegion()
			event := fmt.Sprintf("restarted %d", id)
			acts := s.OnRegionRestarted(id, m.now)
			if m.failed || m.state[id] != Restoring {
				m.expectIgnored(event, acts)
				continue
			}
			if len(acts) != 0 {
				m.fatalf("%s: %v", event, acts)
			}
			m.state[id] = Running
		default:
			next, pending := s.NextRestart()
			m.tick(s.Tick(m.now), next, pending, s)
		}
		for id, st := range m.state {
			if got, _ := s.State(id); got != st {
				m.fatalf("step %d: State(%d) = %v, model %v", step, id, got, st)
			}
		}
		if s.Failed() != m.failed || m.failJobs > 1 {
			m.fatalf("Failed() = %v, model %v, %d FailJob", s.Failed(), m.failed, m.failJobs)
		}
	}
	// Liveness: unless the job failed, every stopped region restarts.
	m.now += time.Hour
	next, pending := s.NextRestart()
	m.tick(s.Tick(m.now), next, pending, s)
	for id, st := range m.state {
		if !m.failed && st == Stopped {
			m.fatalf("region %d still stopped an hour later", id)
		}
	}
	return m.stats
}
