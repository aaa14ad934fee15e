package rescale

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/weirstream/weir/internal/testseed"
	"github.com/weirstream/weir/keygroups"
)

// The simulation runs the whole protocol over an in-memory dataflow with
// random scheduling: P producers (each with its own numbered records of
// random keys) → hash → op, a keyed operator that is rescaled → hash → down,
// a keyed operator rescaled in the same plan half of the time, through FIFO
// channels (with credit into op) where a barrier may overtake queued
// buffers (unaligned), and handoffs that arrive after random delays. The
// coordinator and every task are the real machines; the simulation only
// carries out their actions. At the end it checks what the package doc
// promises, at both operators: every record applied to state exactly once,
// per key and producer in order, every key group's state at its new owner
// alone, nothing held, every credit returned, the rescale committed.

type simRecord struct {
	key, producer, n int
}

type simBuffer struct {
	seq     uint64
	records []simRecord
}

// simItem is a buffer or, with barrier set, a rescale barrier after lastSeq.
type simItem struct {
	buf     *simBuffer
	barrier bool
	lastSeq uint64
}

type simChannel struct {
	producer, consumer int
	items              []simItem
	seq                uint64 // last seq sent
	outstanding        int    // buffers sent and not taken (credit)
}

type simHandoff struct {
	stage, from, to int
	groups          []int
	state           map[int]map[int][]simRecord // group → key → applied records
	records         map[int][]simRecord         // group → set aside, in order
}

// simConsumer is an instance of a keyed operator.
type simConsumer struct {
	task     *Task
	state    map[int]map[int][]simRecord
	held     map[int][]simRecord // group → held records, in order
	aside    map[int][]simRecord // group → records set aside, in order
	carried  map[int][]simRecord // group → records that came with its handoff
	paused   map[int]bool        // input → paused
	stopped  bool
	switched bool // its outputs route by the next operator's new table
}

// simStage is one keyed operator: its tables (equal when it is not
// rescaled), its instances and the channels into them.
type simStage struct {
	name     string
	old, new *keygroups.Table
	cons     []*simConsumer
	in       map[[2]int]*simChannel // producer instance, consumer instance
	credit   bool
}

type sim struct {
	t       *testing.T
	seed    uint64
	rng     *rand.Rand
	max     int
	plan    *Plan
	coord   *Coordinator
	unalign bool
	window  int
	now     time.Duration

	records   [][]simRecord // per producer, still to send
	switched  []bool        // per producer
	injectOK  bool
	stages    [2]*simStage // op, down
	handoffs  []simHandoff
	committed int
	spawning  []TaskKey
	sent      int // records the producers have in all
}

func (s *sim) fatalf(format string, args ...any) {
	s.t.Helper()
	s.t.Fatalf("seed %d (%s, unaligned=%t, window %d): %s", s.seed, s.plan.Summary(), s.unalign, s.window, fmt.Sprintf(format, args...))
}

func TestSimulation(t *testing.T) {
	testseed.Run(t, 400, 60, func(seed uint64) { runSim(t, seed) })
}

func runSim(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 0xba11))
	maxP := []int{4, 8, 16}[rng.IntN(3)]
	pick := func(limit int) int { return 1 + rng.IntN(min(limit, maxP)) }
	producers := pick(3)
	opFrom, downFrom := pick(4), pick(3)
	req := []Target{{"op", pick(5)}}
	for req[0].Parallelism == opFrom {
		req[0].Parallelism = pick(5)
	}
	if rng.IntN(2) == 0 {
		to := pick(4)
		for to == downFrom {
			to = pick(4)
		}
		req = append(req, Target{"down", to})
	}
	opOld, _ := keygroups.Contiguous(maxP, opFrom)
	downOld, _ := keygroups.Contiguous(maxP, downFrom)
	topo := Topology{Job: "sim", MaxParallelism: maxP,
		Operators: []Operator{{Name: "src", Parallelism: producers, Source: true}, {Name: "op", Parallelism: opFrom, Table: opOld},
			{Name: "down", Parallelism: downFrom, Table: downOld}},
		Edges: []Edge{{From: "src", To: "op", Partitioner: "hash"}, {From: "op", To: "down", Partitioner: "hash"}}}
	plan, err := NewPlan(Input{Seq: 1, Topology: topo, Request: req})
	if err != nil {
		t.Fatalf("seed %d: %v", seed, err)
	}
	s := &sim{t: t, seed: seed, rng: rng, max: maxP, plan: plan, coord: NewCoordinator(CoordinatorConfig{}),
		unalign: rng.IntN(2) == 0, window: 1 + rng.IntN(3)}
	for p := range producers {
		var rs []simRecord
		for n := range 10 + rng.IntN(50) {
			rs = append(rs, simRecord{key: rng.IntN(3 * maxP), producer: p, n: n})
		}
		s.records = append(s.records, rs)
		s.sent += len(rs)
	}
	s.switched = make([]bool, producers)
	oldInputs := []int{producers, opFrom}
	for i, old := range []*keygroups.Table{opOld, downOld} {
		st := &simStage{name: topo.Operators[i+1].Name, old: old, new: old, in: map[[2]int]*simChannel{}, credit: i == 0}
		if c, ok := plan.Change(st.name); ok {
			st.new = c.New
		}
		s.stages[i] = st
	}
	for i, st := range s.stages {
		senders := producers
		if i == 1 {
			senders = max(opFrom, s.stages[0].new.Parallelism)
		}
		for c := range max(st.old.Parallelism, st.new.Parallelism) {
			inputs := 0
			if c < st.old.Parallelism {
				inputs = oldInputs[i]
			}
			cfg := TaskConfigFor(plan, st.name, c, inputs)
			cfg.HoldBytes = int64(s.window) // a record counts 1 byte: pauses are frequent
			tk, err := NewTask(cfg)
			if err != nil {
				t.Fatal(err)
			}
			st.cons = append(st.cons, &simConsumer{task: tk, state: map[int]map[int][]simRecord{}, held: map[int][]simRecord{},
				aside: map[int][]simRecord{}, carried: map[int][]simRecord{}, paused: map[int]bool{},
				switched: c >= st.old.Parallelism})
			for p := range senders {
				st.in[[2]int{p, c}] = &simChannel{producer: p, consumer: c}
			}
		}
	}
	startAt, started := rng.IntN(40), false
	for step := 0; ; step++ {
		s.now += time.Millisecond
		moves := s.enabled()
		if !started && (step == startAt || len(moves) == 0) {
			started = true
			s.start()
			continue
		}
		if len(moves) == 0 {
			break
		}
		moves[rng.IntN(len(moves))]()
		if step > 1_000_000 {
			s.fatalf("no end after %d steps", step)
		}
	}
	s.check()
}

func (s *sim) start() {
	acts, err := s.coord.Start(s.now, s.plan)
	if err != nil {
		s.fatalf("start: %v", err)
	}
	s.coordActs(acts)
}

func (s *sim) stage(name string) int {
	for i, st := range s.stages {
		if st.name == name {
			return i
		}
	}
	s.fatalf("no operator %q", name)
	return -1
}

func (s *sim) coordActs(acts []Action) {
	for _, a := range acts {
		switch a := a.(type) {
		case Spawn:
			s.spawning = append(s.spawning, TaskKey{a.Operator, a.Instance})
		case InjectBarrier:
			s.injectOK = true
			// Added instances take part once wired.
			for i, st := range s.stages {
				for c := st.old.Parallelism; c < len(st.cons); c++ {
					s.taskActs(i, c, st.cons[c].task.Begin(s.now), nil)
				}
			}
		case Fence:
			i := s.stage(a.Operator)
			for c, sc := range s.stages[i].cons {
				s.taskActs(i, c, sc.task.Fence(s.now, a.From), nil)
			}
		case Commit:
			s.committed++
		case Finished:
			if a.Result.Moved != s.plan.Moved() {
				s.fatalf("result moved %d, plan %d", a.Result.Moved, s.plan.Moved())
			}
		default:
			s.fatalf("unexpected coordinator action %s", a)
		}
	}
}

// enabled lists the steps that can run now.
func (s *sim) enabled() []func() {
	var out []func()
	for _, k := range s.spawning {
		out = append(out, func() {
			s.spawning = slices.DeleteFunc(s.spawning, func(x TaskKey) bool { return x == k })
			acts, err := s.coord.Prepared(s.now, k)
			if err != nil {
				s.fatalf("prepared: %v", err)
			}
			s.coordActs(acts)
		})
	}
	for p := range s.records {
		if s.injectOK && !s.switched[p] {
			out = append(out, func() { s.inject(p) })
		}
		if len(s.records[p]) > 0 && s.channelFor(p, s.records[p][0]).outstanding < s.window {
			out = append(out, func() { s.emit(p) })
		}
	}
	for i, st := range s.stages {
		for _, ch := range sortedChannels(st.in) {
			if len(ch.items) == 0 {
				continue
			}
			if !st.cons[ch.consumer].paused[ch.producer] || ch.items[0].barrier {
				out = append(out, func() { s.deliver(i, ch, 0) })
			}
			if s.unalign {
				for k, it := range ch.items {
					if it.barrier && k > 0 {
						out = append(out, func() { s.deliver(i, ch, k) })
					}
				}
			}
		}
	}
	for k := range s.handoffs {
		out = append(out, func() { s.deliverHandoff(k) })
	}
	return out
}

func sortedChannels(in map[[2]int]*simChannel) []*simChannel {
	keys := make([][2]int, 0, len(in))
	for k := range in {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b [2]int) int {
		if a[0] != b[0] {
			return a[0] - b[0]
		}
		return a[1] - b[1]
	})
	out := make([]*simChannel, len(keys))
	for i, k := range keys {
		out[i] = in[k]
	}
	return out
}

// channelFor is the channel producer p's next record r goes on.
func (s *sim) channelFor(p int, r simRecord) *simChannel {
	st := s.stages[0]
	t := st.old
	if s.switched[p] {
		t = st.new
	}
	return st.in[[2]int{p, t.Owner(r.key % s.max)}]
}

// emit sends producer p's next 1..3 records that go to the same channel.
func (s *sim) emit(p int) {
	ch := s.channelFor(p, s.records[p][0])
	n := 1 + s.rng.IntN(3)
	var b simBuffer
	for len(s.records[p]) > 0 && len(b.records) < n && s.channelFor(p, s.records[p][0]) == ch {
		b.records = append(b.records, s.records[p][0])
		s.records[p] = s.records[p][1:]
	}
	ch.seq++
	b.seq = ch.seq
	ch.outstanding++
	ch.items = append(ch.items, simItem{buf: &b})
}

// inject switches producer p: the barrier on every channel it had.
func (s *sim) inject(p int) {
	s.switched[p] = true
	for c := range s.stages[0].old.Parallelism {
		ch := s.stages[0].in[[2]int{p, c}]
		ch.items = append(ch.items, simItem{barrier: true, lastSeq: ch.seq})
	}
}

// deliver hands item i of a channel into stage si: the head, or a barrier
// that overtakes the items before it.
func (s *sim) deliver(si int, ch *simChannel, i int) {
	st := s.stages[si]
	it := ch.items[i]
	ch.items = slices.Delete(ch.items, i, i+1)
	c := st.cons[ch.consumer]
	if c.stopped {
		s.fatalf("%v delivered to stopped %s[%d]", it, st.name, ch.consumer)
	}
	if it.barrier {
		acts, err := c.task.Barrier(s.now, ch.producer, it.lastSeq)
		if err != nil {
			s.fatalf("%s barrier: %v", st.name, err)
		}
		// Copies of the overtaken buffers are what SetAside reads.
		s.taskActs(si, ch.consumer, acts, ch.items[:i])
		return
	}
	var groups []int
	var bytes []int64
	for _, r := range it.buf.records {
		groups = append(groups, r.key%s.max)
		bytes = append(bytes, 1)
	}
	d, acts, err := c.task.Buffer(s.now, ch.producer, it.buf.seq, groups, bytes)
	if err != nil {
		s.fatalf("%s buffer: %v", st.name, err)
	}
	for _, g := range d.Hold {
		if st.old.Owner(g) == st.new.Owner(g) {
			s.fatalf("%s[%d] paused group %d, which does not move", st.name, ch.consumer, g)
		}
	}
	for _, r := range it.buf.records {
		g := r.key % s.max
		switch {
		case slices.Contains(d.Drop, g):
		case slices.Contains(d.Hold, g):
			c.held[g] = append(c.held[g], r)
		default:
			s.apply(si, ch.consumer, r)
		}
	}
	if st.credit {
		ch.outstanding--
	}
	s.taskActs(si, ch.consumer, acts, nil)
}

// apply applies r to instance c of stage si and, from op, sends it on to
// down by the table op's instance routes by.
func (s *sim) apply(si, c int, r simRecord) {
	g := r.key % s.max
	st := s.stages[si]
	if st.cons[c].state[g] == nil {
		st.cons[c].state[g] = map[int][]simRecord{}
	}
	st.cons[c].state[g][r.key] = append(st.cons[c].state[g][r.key], r)
	if si == 1 {
		return
	}
	next := s.stages[1]
	t := next.old
	if st.cons[c].switched {
		t = next.new
	}
	ch := next.in[[2]int{c, t.Owner(g)}]
	ch.seq++
	ch.items = append(ch.items, simItem{buf: &simBuffer{seq: ch.seq, records: []simRecord{r}}})
}

func (s *sim) taskActs(si, c int, acts []TaskAction, overtaken []simItem) {
	st := s.stages[si]
	sc := st.cons[c]
	for _, a := range acts {
		switch a := a.(type) {
		case Switch:
			if sc.switched {
				s.fatalf("%s[%d] switches twice", st.name, c)
			}
			sc.switched = true
			if si == 0 { // the barrier on every channel it had into down
				for j := range s.stages[1].old.Parallelism {
					ch := s.stages[1].in[[2]int{c, j}]
					ch.items = append(ch.items, simItem{barrier: true, lastSeq: ch.seq})
				}
			}
		case SetAside:
			for _, it := range overtaken {
				if it.barrier || it.buf.seq <= a.AfterSeq || it.buf.seq > a.LastSeq {
					continue
				}
				for _, r := range it.buf.records {
					if slices.Contains(a.Groups, r.key%s.max) {
						sc.aside[r.key%s.max] = append(sc.aside[r.key%s.max], r)
					}
				}
			}
		case Handoff:
			h := simHandoff{stage: si, from: c, to: a.To, groups: a.Groups, state: map[int]map[int][]simRecord{}, records: map[int][]simRecord{}}
			for _, g := range a.Groups {
				h.state[g] = sc.state[g]
				delete(sc.state, g)
				h.records[g] = sc.aside[g]
				delete(sc.aside, g)
			}
			s.handoffs = append(s.handoffs, h)
		case Restore:
			// Carried out in deliverHandoff, which has the state.
		case Release:
			for _, r := range sc.carried[a.Group] {
				s.apply(si, c, r)
			}
			delete(sc.carried, a.Group)
			for _, r := range sc.held[a.Group] {
				s.apply(si, c, r)
			}
			delete(sc.held, a.Group)
		case PauseInput:
			if sc.paused[a.Input] {
				s.fatalf("%s[%d] pauses input %d twice", st.name, c, a.Input)
			}
			sc.paused[a.Input] = true
		case ResumeInput:
			if !sc.paused[a.Input] {
				s.fatalf("%s[%d] resumes input %d, not paused", st.name, c, a.Input)
			}
			delete(sc.paused, a.Input)
		case InputDrained:
			from := "src"
			if si == 1 {
				from = "op"
			}
			s.coordActs(s.coord.InputDrained(s.now, TaskKey{st.name, c}, TaskKey{from, a.Input}))
		case TaskDone:
			acts, err := s.coord.TaskDone(s.now, TaskKey{st.name, c}, a.Result)
			if err != nil {
				s.fatalf("task done: %v", err)
			}
			s.coordActs(acts)
		case Stop:
			for k, ch := range st.in {
				if k[1] == c && len(ch.items) > 0 {
					s.fatalf("%s[%d] stops with %d items queued from %d", st.name, c, len(ch.items), ch.producer)
				}
			}
			sc.stopped = true
		default:
			s.fatalf("unexpected task action %s", a)
		}
	}
}

func (s *sim) deliverHandoff(i int) {
	h := s.handoffs[i]
	s.handoffs = slices.Delete(s.handoffs, i, i+1)
	st := s.stages[h.stage]
	c := st.cons[h.to]
	for g, keys := range h.state {
		if c.state[g] != nil {
			s.fatalf("%s[%d] already has state of group %d", st.name, h.to, g)
		}
		if keys != nil {
			c.state[g] = keys
		}
	}
	// Restore: the state now; the records set aside wait for Release.
	acts, err := c.task.Handoff(s.now, h.from, h.groups, int64(len(h.records)))
	if err != nil {
		s.fatalf("handoff: %v", err)
	}
	if _, ok := acts[0].(Restore); !ok {
		s.fatalf("handoff answered %v, want Restore first", acts)
	}
	for g, rs := range h.records {
		c.carried[g] = rs
	}
	s.taskActs(h.stage, h.to, acts[1:], nil)
}

func (s *sim) check() {
	if s.committed != 1 {
		s.fatalf("committed %d times", s.committed)
	}
	for p := range s.records {
		if len(s.records[p]) > 0 {
			s.fatalf("producer %d has %d records left", p, len(s.records[p]))
		}
	}
	for _, st := range s.stages {
		_, changed := s.plan.Change(st.name)
		for c, sc := range st.cons {
			if changed && !sc.task.Done() {
				s.fatalf("%s[%d] not done", st.name, c)
			}
			if len(sc.held) > 0 || len(sc.aside) > 0 || len(sc.paused) > 0 || len(sc.carried) > 0 {
				s.fatalf("%s[%d] ends with held %v, set aside %v, paused %v, carried %v", st.name, c, sc.held, sc.aside, sc.paused, sc.carried)
			}
			if (c >= st.new.Parallelism) != sc.stopped {
				s.fatalf("%s[%d] stopped=%t, parallelism now %d", st.name, c, sc.stopped, st.new.Parallelism)
			}
		}
		for _, ch := range st.in {
			if len(ch.items) > 0 || ch.outstanding != 0 {
				s.fatalf("channel %d→%s[%d] ends with %d items, %d outstanding", ch.producer, st.name, ch.consumer, len(ch.items), ch.outstanding)
			}
		}
		// Every group's state is at its new owner alone; per key and
		// producer the records applied are in the producer's order, none
		// twice; and all of them are there.
		applied := 0
		for c, sc := range st.cons {
			for g, keys := range sc.state {
				if st.new.Owner(g) != c {
					s.fatalf("state of %s group %d at instance %d, owner %d", st.name, g, c, st.new.Owner(g))
				}
				for key, rs := range keys {
					next := map[int]int{}
					for _, r := range rs {
						if r.key != key || r.key%s.max != g {
							s.fatalf("record %v in key %d's state of %s group %d", r, key, st.name, g)
						}
						if r.n < next[r.producer] {
							s.fatalf("%s key %d: producer %d's record %d applied after %d (out of order or twice)", st.name, key, r.producer, r.n, next[r.producer]-1)
						}
						next[r.producer] = r.n + 1
						applied++
					}
				}
			}
		}
		if applied != s.sent {
			s.fatalf("%s applied %d records, %d sent", st.name, applied, s.sent)
		}
	}
}
