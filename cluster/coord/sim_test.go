package coord

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/weirstream/weir/cluster"
	"github.com/weirstream/weir/internal/testseed"
)

// simLease is the lease bucket of the simulation: compare-and-set writes
// and expiry after the timeout, as cluster.Leases does.
type simLease struct {
	holder  string
	epoch   uint64
	renewed time.Time
}

// TestSimulatedTakeovers runs three nodes' cores against a simulated lease
// bucket and job registry, with heartbeats lost and nodes paused at random
// (a paused node neither heartbeats, ticks nor renews), and checks at every
// step that no two nodes hold the job's lease at once, that coordinators
// take over with ever higher epochs, and that the job always ends up
// coordinated by a live node.
func TestSimulatedTakeovers(t *testing.T) {
	testseed.Run(t, 200, 20, func(seed uint64) {
		if err := simulate(seed); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
	})
}

// sim is three nodes' cores, the lease bucket and the job registry.
type sim struct {
	timeout   time.Duration
	ids       []string
	cores     map[string]*Core
	lease     *simLease
	rec       cluster.JobRecord
	lastEpoch uint64
}

func simulate(seed uint64) error {
	rng := rand.New(rand.NewPCG(seed, 1))
	s := &sim{timeout: time.Second, ids: []string{"a", "b", "c"}, cores: map[string]*Core{},
		rec: cluster.JobRecord{Name: "j", State: cluster.JobRunning, Coordinator: "gone"}}
	for _, id := range s.ids {
		s.cores[id] = New(Config{Self: id, Boot: epoch, HeartbeatTimeout: s.timeout, PlacementTimeout: 3 * s.timeout})
	}
	paused := map[string]time.Time{} // node → paused until
	now := epoch
	for step := 0; step < 400; step++ {
		now = now.Add(time.Duration(rng.IntN(150)) * time.Millisecond)
		if rng.IntN(40) == 0 {
			paused[s.ids[rng.IntN(len(s.ids))]] = now.Add(time.Duration(rng.IntN(3000)) * time.Millisecond)
		}
		for _, id := range s.ids {
			if now.Before(paused[id]) {
				continue
			}
			// A heartbeat is lost one time in five.
			if err := s.step(now, id, func() bool { return rng.IntN(5) > 0 }); err != nil {
				return fmt.Errorf("%v: %s: %w", now.Sub(epoch), id, err)
			}
		}
		var holders []string
		for _, id := range s.ids {
			if s.cores[id].Holds(now, "j") {
				holders = append(holders, id)
			}
		}
		if len(holders) > 1 {
			return fmt.Errorf("%v: nodes %v all hold the lease of j", now.Sub(epoch), holders)
		}
	}
	// Everyone resumes; after a few timeouts of calm one live node coordinates j.
	for step := 0; step < 40; step++ {
		now = now.Add(100 * time.Millisecond)
		for _, id := range s.ids {
			if err := s.step(now, id, func() bool { return true }); err != nil {
				return fmt.Errorf("%v: %s: %w", now.Sub(epoch), id, err)
			}
		}
	}
	c := s.cores[s.rec.Coordinator]
	if s.lease == nil || c == nil || !c.Holds(now, "j") || !c.coord["j"] {
		return fmt.Errorf("after calm: job j is not coordinated by a node holding its lease (record %+v, lease %+v)", s.rec, s.lease)
	}
	return nil
}

// step is node id's turn at now: it heartbeats to each node for which
// deliver says so, renews its leases, ticks and adopts what its core asks.
func (s *sim) step(now time.Time, id string, deliver func() bool) error {
	c := s.cores[id]
	for _, to := range s.ids {
		if deliver() {
			s.cores[to].Heartbeat(now, cluster.Heartbeat{Node: id, Slots: 4, StartedUnixNano: epoch.UnixNano(), SentUnixNano: now.UnixNano()})
		}
	}
	for _, r := range c.Renewals() {
		var err error
		if s.lease == nil || s.lease.holder != id || s.lease.epoch != c.leases[r.Job].epoch {
			err = cluster.ErrLeaseLost
		} else {
			s.lease.renewed = now
		}
		for _, act := range c.LeaseRenewed(now, r.Job, err) {
			if act.Kind != Abandon || !c.coord[act.Job] {
				return fmt.Errorf("unexpected %v", act)
			}
			if act := c.Ended(now, act.Job, true); act.Kind != Forget {
				return fmt.Errorf("an abandoned job ends with %v, want forget", act)
			}
		}
	}
	for _, act := range c.Tick(now) {
		if act.Kind != ScanJobs {
			continue
		}
		for _, acq := range c.JobRecords(now, []cluster.JobRecord{s.rec}) {
			won := s.lease == nil || now.Sub(s.lease.renewed) > s.timeout
			if won {
				s.lease = &simLease{holder: id, epoch: s.lastEpoch + 1, renewed: now}
			}
			got := c.LeaseAcquired(now, acq.Job, won, s.lease.epoch, s.lease.holder)
			switch {
			case won && (got.Kind != Coordinate || got.Epoch <= s.lastEpoch):
				return fmt.Errorf("won the lease: %v, want coordinate at an epoch above %d", got, s.lastEpoch)
			case won:
				s.lastEpoch = got.Epoch
				s.rec.Coordinator = id
				c.Coordinating(acq.Job)
			case got.Kind != Drop:
				return fmt.Errorf("lost the lease: %v, want drop", got)
			}
			c.Unclaim(acq.Job)
		}
	}
	return nil
}
