package checkpoints

import (
	"errors"
	"fmt"
	"github.com/weirstream/weir/internal/task"
	"github.com/weirstream/weir/internal/testseed"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestRandomRuns drives a Coordinator with random acks, declines, duplicate
// and stale events, manifest results, ticks, pauses and resumes, a final
// request and (in some runs) a stop request, and checks its rules after every step against an
// independent model.
func TestRandomRuns(t *testing.T) {
	testseed.Run(t, 300, 300, func(seed uint64) { runRandom(t, seed) })
}

// model is what the test expects, kept independently of the Coordinator.
type model struct {
	t     *testing.T
	where string
	cfg   Config
	max   int // checkpoints in flight at most
	now   time.Duration

	lastID    uint64
	flights   []*mflight // in flight, oldest first
	lastTrig  time.Duration
	endedAt   time.Duration
	completed []uint64
	deleted   []uint64
	finalReq  bool
	finalDone bool
	stopReq   bool
	stopDone  bool
	paused    bool // between Pause and Resume: nothing may be triggered
}

// mflight is the model of one checkpoint in flight.
type mflight struct {
	id          uint64
	trigAt      time.Duration
	final, stop bool
	acked       map[task.ID]bool
	writing     bool
}

func (f *mflight) allAcked(n int) bool { return len(f.acked) == n }

// done says the job's last checkpoint (final or stop) completed.
func (m *model) done() bool { return m.finalDone || m.stopDone }

// flight returns checkpoint id if in flight.
func (m *model) flight(id uint64) *mflight {
	for _, f := range m.flights {
		if f.id == id {
			return f
		}
	}
	return nil
}

func (m *model) remove(id uint64) {
	m.flights = slices.DeleteFunc(m.flights, func(f *mflight) bool { return f.id == id })
	m.endedAt = m.now
}

func (m *model) fatalf(format string, args ...any) {
	m.t.Helper()
	m.t.Fatalf("%s (t=%v): %s", m.where, m.now, fmt.Sprintf(format, args...))
}

// check applies the actions of one event to the model, asserting each is
// allowed. fromTick says the event was a Tick.
func (m *model) check(event string, acts []Action, fromTick bool) {
	m.t.Helper()
	if m.done() && len(acts) > 0 {
		m.fatalf("%s after the last checkpoint: %v", event, acts)
	}
	n := len(m.cfg.Tasks)
	for _, act := range acts {
		switch act := act.(type) {
		case Trigger:
			last := act.Final || act.Stop
			if len(m.flights) >= m.max || (last && len(m.flights) > 0) {
				m.fatalf("%s: %v while %d in flight", event, act, len(m.flights))
			}
			if m.paused {
				m.fatalf("%s: %v while paused", event, act)
			}
			if act.ID != m.lastID+1 {
				m.fatalf("%s: %v, want id %d", event, act, m.lastID+1)
			}
			if act.Final != (m.finalReq && !m.stopReq) || act.Stop != m.stopReq {
				m.fatalf("%s: %v, final requested=%v, stop requested=%v", event, act, m.finalReq, m.stopReq)
			}
			if !last && (!fromTick || m.now < max(m.endedAt, m.lastTrig)+m.cfg.Interval) {
				m.fatalf("%s: %v before the interval (ended %v, last trigger %v)", event, act, m.endedAt, m.lastTrig)
			}
			m.lastID, m.lastTrig = act.ID, m.now
			m.flights = append(m.flights, &mflight{id: act.ID, trigAt: m.now, final: act.Final, stop: act.Stop, acked: map[task.ID]bool{}})
		case WriteManifest:
			if len(m.flights) == 0 || m.flights[0].id != act.ID || m.flights[0].writing || !m.flights[0].allAcked(n) {
				m.fatalf("%s: %v, not the oldest in flight acknowledged by all and not written", event, act)
			}
			m.flights[0].writing = true
		case Completed:
			if !strings.HasPrefix(event, "written") || len(m.flights) == 0 {
				m.fatalf("%s: %v with nothing in flight", event, act)
			}
			f := m.flights[0]
			if act.ID != f.id || !f.writing || act.Final != f.final || act.Stop != f.stop {
				m.fatalf("%s: %v (oldest %d writing=%v final=%v)", event, act, f.id, f.writing, f.final)
			}
			if act.Duration != m.now-f.trigAt {
				m.fatalf("%s: %v, want duration %v", event, act, m.now-f.trigAt)
			}
			if len(m.completed) > 0 && m.completed[len(m.completed)-1] >= act.ID {
				m.fatalf("%s: %v after %v: out of order", event, act, m.completed)
			}
			m.completed = append(m.completed, act.ID)
			m.remove(act.ID)
			if f.final {
				m.finalDone = true
			}
			if f.stop {
				m.stopDone = true
			}
		case Aborted:
			f := m.flight(act.ID)
			if f == nil {
				m.fatalf("%s: %v, not in flight", event, act)
			}
			switch {
			case strings.HasPrefix(act.Reason, "timeout"):
				if !fromTick || f.allAcked(n) || m.now-f.trigAt < m.cfg.Timeout {
					m.fatalf("%s: %v at %v after trigger", event, act, m.now-f.trigAt)
				}
			case strings.HasPrefix(act.Reason, "declined"):
				if !strings.HasPrefix(event, fmt.Sprintf("decline %d ", act.ID)) || f.allAcked(n) {
					m.fatalf("%s: %v", event, act)
				}
			case strings.HasPrefix(act.Reason, "write manifest"):
				if event != fmt.Sprintf("failed %d", act.ID) || !f.writing {
					m.fatalf("%s: %v", event, act)
				}
			case strings.HasPrefix(act.Reason, "superseded by the stop"):
				if event != "stop" || f.allAcked(n) {
					m.fatalf("%s: %v", event, act)
				}
			default:
				m.fatalf("%s: %v: unknown reason", event, act)
			}
			m.remove(act.ID)
		case Delete:
			m.deleted = append(m.deleted, act.IDs...)
		case FinalDone:
			if !m.finalDone || m.completed[len(m.completed)-1] != act.ID {
				m.fatalf("%s: %v", event, act)
			}
		case StopDone:
			if !m.stopDone || m.completed[len(m.completed)-1] != act.ID {
				m.fatalf("%s: %v", event, act)
			}
		case Ignored:
			if !strings.Contains(event, "stranger") && !strings.Contains(event, "future") {
				m.fatalf("%s: unexpected %v", event, act)
			}
		default:
			m.fatalf("%s: unknown action %T", event, act)
		}
	}
	// Liveness within one step: the oldest checkpoint, acknowledged by
	// every task, is being written.
	if len(m.flights) > 0 && m.flights[0].allAcked(n) && !m.flights[0].writing {
		m.fatalf("%s: %d acknowledged by every task and oldest, but not written", event, m.flights[0].id)
	}
}

// checkState compares the Coordinator's queries with the model.
func (m *model) checkState(c *Coordinator) {
	m.t.Helper()
	var ids []uint64
	for _, f := range m.flights {
		ids = append(ids, f.id)
	}
	if got := c.InFlight(); !slices.Equal(got, ids) {
		m.fatalf("InFlight() = %v; model %v", got, ids)
	}
	keep := m.completed[max(0, len(m.completed)-m.cfg.Retain):]
	if got := c.Completed(); !slices.Equal(got, keep) {
		m.fatalf("Completed() = %v, want %v", got, keep)
	}
	if want := m.completed[:len(m.completed)-len(keep)]; !slices.Equal(m.deleted, want) {
		m.fatalf("deleted %v, want %v", m.deleted, want)
	}
}

func runRandom(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, ^seed))
	cfg := Config{
		Interval: time.Duration(rng.IntN(20)) * time.Second,
		Timeout:  time.Duration(1+rng.IntN(20)) * time.Second,
		Retain:   1 + rng.IntN(3),
		// 0 (one at a time, as 1) in half of the runs, else 1 to 3.
		MaxConcurrent: max(0, rng.IntN(6)-2),
	}
	for i := range 1 + rng.IntN(4) {
		cfg.Tasks = append(cfg.Tasks, task.ID{Operator: "op", Instance: i})
	}
	where := fmt.Sprintf("seed %d (replay: go test -run TestRandomRuns ./checkpoints -seed=%d) %+v", seed, seed, cfg)
	c, err := New(cfg, 0, 0)
	if err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	m := &model{t: t, where: where, cfg: cfg, max: max(1, cfg.MaxConcurrent)}
	stranger := task.ID{Operator: "stranger", Instance: 0}
	finalAt := 200 + rng.IntN(400)
	stopAt := -1
	if rng.IntN(2) == 0 {
		stopAt = 100 + rng.IntN(600) // before or after the final request
	}

	for step := 0; step < 5000 && !m.done(); step++ {
		m.now += time.Duration(rng.IntN(1500)) * time.Millisecond
		task := cfg.Tasks[rng.IntN(len(cfg.Tasks))]
		var id uint64
		if len(m.flights) > 0 {
			id = m.flights[rng.IntN(len(m.flights))].id
		}
		if id == 0 || rng.IntN(8) == 0 {
			id = uint64(rng.IntN(int(m.lastID) + 1)) // stale or none
		}
		var event string
		var acts []Action
		tick := false
		switch r := rng.IntN(100); {
		case step == finalAt:
			if !m.stopReq {
				m.finalReq = true
			}
			event, acts = "final", c.RequestFinal(m.now)
		case step == stopAt:
			m.stopReq = true
			event, acts = "stop", c.RequestStop(m.now)
		case r < 30:
			event, acts, tick = "tick", c.Tick(m.now), true
		case r < 70:
			event = fmt.Sprintf("ack %d %v", id, task)
			if f := m.flight(id); f != nil && !f.allAcked(len(cfg.Tasks)) {
				f.acked[task] = true
			}
			acts = c.OnAck(id, task, m.now)
		case r < 72:
			event, acts = fmt.Sprintf("ack stranger %d", id), c.OnAck(id, stranger, m.now)
		case r < 73:
			event, acts = "ack future", c.OnAck(m.lastID+1+uint64(rng.IntN(3)), task, m.now)
		case r < 75:
			event, acts = fmt.Sprintf("decline %d %v", id, task), c.OnDecline(id, task, "boom", m.now)
		case r < 77:
			m.paused = true
			event = "pause"
			c.Pause()
		case r < 80:
			m.paused = false
			event, acts = "resume", c.Resume(m.now)
		case r < 90:
			event, acts = fmt.Sprintf("written %d", id), c.OnManifestWritten(id, m.now)
		default:
			event, acts = fmt.Sprintf("failed %d", id), c.OnManifestFailed(id, errors.New("io"), m.now)
		}
		m.check(event, acts, tick)
		m.checkState(c)
	}
	// Liveness: with tasks and storage well behaved and no region being
	// restored, the final (or stop) one completes.
	if m.paused {
		m.paused = false
		m.check("resume", c.Resume(m.now), false)
	}
	if !m.finalReq && !m.stopReq {
		m.finalReq = true
		m.check("final", c.RequestFinal(m.now), false)
	}
	for range 100 {
		if m.done() {
			break
		}
		if len(m.flights) == 0 {
			m.check("tick", c.Tick(m.now), true)
			continue
		}
		for _, f := range slices.Clone(m.flights) {
			for _, task := range cfg.Tasks {
				f.acked[task] = true
				m.check("ack", c.OnAck(f.id, task, m.now), false)
			}
		}
		for len(m.flights) > 0 && m.flights[0].writing {
			id := m.flights[0].id
			m.check(fmt.Sprintf("written %d", id), c.OnManifestWritten(id, m.now), false)
		}
		m.checkState(c)
	}
	if !m.done() {
		m.fatalf("final or stop checkpoint never completed")
	}
	// A stop asked for while the final checkpoint's manifest was being
	// written gives way to it; otherwise the stop checkpoint completes.
	if m.stopReq && !m.stopDone && !m.finalDone {
		m.fatalf("stop requested, but neither the stop nor the final checkpoint completed")
	}
	m.check("tick", c.Tick(m.now+time.Hour), true)
}
