package cluster

import (
	"slices"
	"testing"
	"time"
)

func TestMembers(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	hb := func(node string, started, sent int64) Heartbeat {
		return Heartbeat{Node: node, Slots: 4, StartedUnixNano: started, SentUnixNano: sent}
	}
	// step is one scripted event: a heartbeat (observe) or a tick.
	type step struct {
		at         int // ms after t0
		observe    *Heartbeat
		wantJoined bool
		tick       bool
		wantDead   []string
		wantAlive  []string
	}
	obs := func(h Heartbeat) *Heartbeat { return &h }
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{
			name: "join, stay alive, die once, rejoin",
			steps: []step{
				{at: 0, observe: obs(hb("n1", 1, 1)), wantJoined: true, wantAlive: []string{"n1"}},
				{at: 300, observe: obs(hb("n1", 1, 2)), wantJoined: false},
				{at: 1300, tick: true, wantDead: nil, wantAlive: []string{"n1"}}, // exactly timeout: alive
				{at: 1301, tick: true, wantDead: []string{"n1"}, wantAlive: []string{}},
				{at: 5000, tick: true, wantDead: nil, wantAlive: []string{}}, // reported once
				{at: 5100, observe: obs(hb("n1", 1, 3)), wantJoined: true, wantAlive: []string{"n1"}},
				{at: 5200, tick: true, wantDead: nil},
			},
		},
		{
			name: "several nodes, sorted, only silent one dies",
			steps: []step{
				{at: 0, observe: obs(hb("n3", 1, 1)), wantJoined: true},
				{at: 0, observe: obs(hb("n1", 1, 1)), wantJoined: true},
				{at: 0, observe: obs(hb("n2", 1, 1)), wantJoined: true, wantAlive: []string{"n1", "n2", "n3"}},
				{at: 900, observe: obs(hb("n1", 1, 2))},
				{at: 900, observe: obs(hb("n3", 1, 2))},
				{at: 1500, tick: true, wantDead: []string{"n2"}, wantAlive: []string{"n1", "n3"}},
				{at: 3000, tick: true, wantDead: []string{"n1", "n3"}, wantAlive: []string{}},
			},
		},
		{
			name: "restart within timeout counts as join, stale heartbeats ignored",
			steps: []step{
				{at: 0, observe: obs(hb("n1", 10, 100)), wantJoined: true},
				{at: 100, observe: obs(hb("n1", 20, 200)), wantJoined: true},  // new incarnation
				{at: 200, observe: obs(hb("n1", 10, 150)), wantJoined: false}, // old incarnation, late
				{at: 300, observe: obs(hb("n1", 20, 190)), wantJoined: false}, // reordered
				{at: 1150, tick: true, wantDead: []string{"n1"}},              // stale ones did not refresh liveness
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := NewMembers(time.Second)
			for i, s := range tc.steps {
				if s.observe != nil {
					if got := m.Observe(*s.observe, at(s.at)); got != s.wantJoined {
						t.Fatalf("step %d: Observe(%+v) joined = %v, want %v", i, *s.observe, got, s.wantJoined)
					}
				}
				if s.tick {
					if got := m.Tick(at(s.at)); !slices.Equal(got, s.wantDead) {
						t.Fatalf("step %d: Tick dead = %v, want %v", i, got, s.wantDead)
					}
				}
				if s.wantAlive != nil {
					var got []string
					for _, h := range m.Alive() {
						got = append(got, h.Node)
					}
					if !slices.Equal(got, s.wantAlive) && !(len(got) == 0 && len(s.wantAlive) == 0) {
						t.Fatalf("step %d: Alive = %v, want %v", i, got, s.wantAlive)
					}
				}
			}
		})
	}
}

func TestMembersLatestHeartbeatAndAge(t *testing.T) {
	t0 := time.Unix(1000, 0)
	m := NewMembers(time.Second)
	if _, ok := m.Age("n1", t0); ok {
		t.Fatal("Age of unknown node reported")
	}
	m.Observe(Heartbeat{Node: "n1", Slots: 4, Used: 1, StartedUnixNano: 1, SentUnixNano: 1}, t0)
	m.Observe(Heartbeat{Node: "n1", Slots: 4, Used: 3, StartedUnixNano: 1, SentUnixNano: 2}, t0.Add(200*time.Millisecond))
	alive := m.Alive()
	if len(alive) != 1 || alive[0].Used != 3 {
		t.Fatalf("Alive = %+v, want the latest heartbeat (Used 3)", alive)
	}
	if age, ok := m.Age("n1", t0.Add(time.Second)); !ok || age != 800*time.Millisecond {
		t.Fatalf("Age = %v, %v; want 800ms, true", age, ok)
	}
	m.Tick(t0.Add(5 * time.Second))
	if age, ok := m.Age("n1", t0.Add(5*time.Second)); !ok || age != 4800*time.Millisecond {
		t.Fatalf("Age of dead node = %v, %v; want 4.8s, true", age, ok)
	}
}

// TestMembersLose: a node declared dead by other means than silence (its
// connection closed) is dead at once, reported by neither Tick nor Lose
// again, keeps its latest heartbeat, and is alive again from its next one.
func TestMembersLose(t *testing.T) {
	t0 := time.Unix(1000, 0)
	m := NewMembers(time.Second)
	if m.Lose("n1") {
		t.Fatal("an unknown node lost")
	}
	m.Observe(Heartbeat{Node: "n1", Slots: 2, StartedUnixNano: 1, SentUnixNano: 1}, t0)
	if !m.Lose("n1") || m.IsAlive("n1") || m.Lose("n1") {
		t.Fatal("Lose: want alive → dead once")
	}
	if hb, ok := m.Latest("n1"); !ok || hb.Slots != 2 {
		t.Fatalf("Latest of a lost node = %+v, %v", hb, ok)
	}
	if dead := m.Tick(t0.Add(5 * time.Second)); len(dead) != 0 {
		t.Fatalf("Tick reported %v again", dead)
	}
	if !m.Observe(Heartbeat{Node: "n1", StartedUnixNano: 1, SentUnixNano: 2}, t0.Add(6*time.Second)) || !m.IsAlive("n1") {
		t.Fatal("a lost node's next heartbeat does not bring it back")
	}
}
