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
// random keys) → hash → a keyed operator rescaled from one parallelism to
// another → hash → a keyed operator that is not rescaled, through FIFO
// channels (with credit into the rescaled one) where a barrier may overtake
// queued buffers (unaligned), and handoffs that arrive after random delays.
// The coordinator and every task are the real machines; the simulation only
// carries out their actions. At the end it checks what the package doc
// promises: every record applied to state exactly once, per key and
// producer in order, at both stages, every key group's state at its new
// owner alone, every credit returned, the rescale committed.

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
	outstanding        int    // buffers sent and not credited
}

type simHandoff struct {
	from, to int
	groups   []int
	state    map[int]map[int][]simRecord // group → key → applied records
	records  map[int][]simRecord         // group → set aside, in order
}

type simConsumer struct {
	task    *Task
	state   map[int]map[int][]simRecord
	held    map[int][]simRecord
	aside   map[int][]simRecord // group → records set aside, in order
	carried map[int][]simRecord // group → records that came with its handoff
	inputs  map[int]*simChannel // input index → channel
	stopped bool
	paused  map[int]bool // input → paused
}

type sim struct {
	t        *testing.T
	seed     uint64
	rng      *rand.Rand
	max      int
	old, new *keygroups.Table
	plan     *Plan
	coord    *Coordinator
	unalign  bool
	window   int
	now      time.Duration

	records   [][]simRecord // per producer, still to send
	switched  []bool
	injectOK  bool
	channels  map[[2]int]*simChannel // producer, consumer
	cons      []*simConsumer
	handoffs  []simHandoff
	committed int
	spawning  []TaskKey
	sent      int // records the producers have in all

	downTable *keygroups.Table
	down      []*simDown
	outCh     map[[2]int]*simChannel // op instance, down instance
}

// simDown is an instance of the downstream operator, which is not rescaled.
type simDown struct {
	task  *Task
	state map[int][]simRecord // key → records applied
}

func (s *sim) fatalf(format string, args ...any) {
	s.t.Helper()
	s.t.Fatalf("seed %d (%d→%d of %d, unaligned=%t, window %d): %s", s.seed, s.old.Parallelism, s.new.Parallelism, s.max,
		s.unalign, s.window, fmt.Sprintf(format, args...))
}

func TestSimulation(t *testing.T) {
	testseed.Run(t, 400, 60, func(seed uint64) { runSim(t, seed) })
}

func runSim(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 0xba11))
	maxP := []int{4, 8, 16}[rng.IntN(3)]
	from := 1 + rng.IntN(min(4, maxP))
	to := 1 + rng.IntN(min(5, maxP))
	for to == from {
		to = 1 + rng.IntN(min(5, maxP))
	}
	producers := 1 + rng.IntN(3)
	old, err := keygroups.Contiguous(maxP, from)
	if err != nil {
		t.Fatal(err)
	}
	downP := 1 + rng.IntN(min(3, maxP))
	downTable, err := keygroups.Contiguous(maxP, downP)
	if err != nil {
		t.Fatal(err)
	}
	topo := Topology{Job: "sim", MaxParallelism: maxP,
		Operators: []Operator{{Name: "src", Parallelism: producers, Source: true}, {Name: "op", Parallelism: from, Table: old},
			{Name: "down", Parallelism: downP, Table: downTable}},
		Edges: []Edge{{From: "src", To: "op", Partitioner: "hash"}, {From: "op", To: "down", Partitioner: "hash"}}}
	plan, err := NewPlan(Input{Seq: 1, Topology: topo, Request: []Target{{"op", to}}})
	if err != nil {
		t.Fatalf("seed %d: %v", seed, err)
	}
	c, _ := plan.Change("op")
	s := &sim{t: t, seed: seed, rng: rng, max: maxP, old: old, new: c.New, plan: plan, coord: NewCoordinator(CoordinatorConfig{}),
		unalign: rng.IntN(2) == 0, window: 1 + rng.IntN(3), channels: map[[2]int]*simChannel{},
		downTable: downTable, outCh: map[[2]int]*simChannel{}}
	for j := range downP {
		tk, err := NewTask(TaskConfigFor(plan, "down", j, from))
		if err != nil {
			t.Fatal(err)
		}
		s.down = append(s.down, &simDown{task: tk, state: map[int][]simRecord{}})
		for i := range max(from, to) {
			s.outCh[[2]int{i, j}] = &simChannel{producer: i, consumer: j}
		}
	}
	for p := range producers {
		var rs []simRecord
		for n := range 10 + rng.IntN(50) {
			rs = append(rs, simRecord{key: rng.IntN(3 * maxP), producer: p, n: n})
		}
		s.records = append(s.records, rs)
		s.sent += len(rs)
	}
	s.switched = make([]bool, producers)
	for i := range max(from, to) {
		inputs := 0
		if i < from {
			inputs = producers
		}
		cfg := TaskConfigFor(plan, "op", i, inputs)
		cfg.HoldLimit = s.window
		tk, err := NewTask(cfg)
		if err != nil {
			t.Fatal(err)
		}
		sc := &simConsumer{task: tk, state: map[int]map[int][]simRecord{}, held: map[int][]simRecord{}, aside: map[int][]simRecord{},
			carried: map[int][]simRecord{},
			inputs:  map[int]*simChannel{}, paused: map[int]bool{}}
		for p := range producers {
			ch := &simChannel{producer: p, consumer: i}
			s.channels[[2]int{p, i}] = ch
			sc.inputs[p] = ch
		}
		s.cons = append(s.cons, sc)
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

func (s *sim) coordActs(acts []Action) {
	for _, a := range acts {
		switch a := a.(type) {
		case Spawn:
			s.spawning = append(s.spawning, TaskKey{a.Operator, a.Instance})
		case InjectBarrier:
			s.injectOK = true
			// Added instances take part once wired.
			for i := s.old.Parallelism; i < len(s.cons); i++ {
				s.taskActs(i, s.cons[i].task.Begin(s.now))
			}
		case Fence:
			for c := range s.cons {
				s.taskActs(c, s.cons[c].task.Fence(s.now, a.From))
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
	for _, ch := range s.sortedChannels() {
		if len(ch.items) == 0 {
			continue
		}
		if !s.cons[ch.consumer].paused[ch.producer] || ch.items[0].barrier {
			out = append(out, func() { s.deliver(ch, 0) })
		}
		if s.unalign {
			for i, it := range ch.items {
				if it.barrier && i > 0 {
					out = append(out, func() { s.deliver(ch, i) })
				}
			}
		}
	}
	for i := range s.handoffs {
		out = append(out, func() { s.deliverHandoff(i) })
	}
	for i := range len(s.cons) {
		for j := range s.down {
			ch := s.outCh[[2]int{i, j}]
			if len(ch.items) == 0 {
				continue
			}
			out = append(out, func() { s.deliverDown(ch, 0) })
			if s.unalign {
				for k, it := range ch.items {
					if it.barrier && k > 0 {
						out = append(out, func() { s.deliverDown(ch, k) })
					}
				}
			}
		}
	}
	return out
}

// deliverDown hands item i of a channel into the downstream operator.
func (s *sim) deliverDown(ch *simChannel, i int) {
	it := ch.items[i]
	ch.items = slices.Delete(ch.items, i, i+1)
	d := s.down[ch.consumer]
	if it.barrier {
		acts, err := d.task.Barrier(s.now, ch.producer, it.lastSeq)
		if err != nil {
			s.fatalf("down barrier: %v", err)
		}
		s.downActs(ch.consumer, acts)
		return
	}
	var groups []int
	for _, r := range it.buf.records {
		groups = append(groups, r.key%s.max)
	}
	dec, acts, err := d.task.Buffer(s.now, ch.producer, it.buf.seq, groups)
	if err != nil {
		s.fatalf("down buffer: %v", err)
	}
	if len(dec.Hold) > 0 || len(dec.Drop) > 0 {
		s.fatalf("down instance %d, which is not rescaled, decided %+v", ch.consumer, dec)
	}
	for _, r := range it.buf.records {
		d.state[r.key] = append(d.state[r.key], r)
	}
	s.downActs(ch.consumer, acts)
}

func (s *sim) downActs(j int, acts []TaskAction) {
	for _, a := range acts {
		switch a := a.(type) {
		case Switch:
			// The last stage: nothing downstream.
		case InputDrained:
			s.coordActs(s.coord.InputDrained(s.now, TaskKey{"down", j}, TaskKey{"op", a.Input}))
		default:
			s.fatalf("unexpected down action %s", a)
		}
	}
}

func (s *sim) sortedChannels() []*simChannel {
	var out []*simChannel
	for p := range s.records {
		for c := range s.cons {
			out = append(out, s.channels[[2]int{p, c}])
		}
	}
	return out
}

func (s *sim) route(p int, r simRecord) int {
	g := r.key % s.max
	if s.switched[p] {
		return s.new.Owner(g)
	}
	return s.old.Owner(g)
}

func (s *sim) channelFor(p int, r simRecord) *simChannel {
	return s.channels[[2]int{p, s.route(p, r)}]
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

func (s *sim) inject(p int) {
	s.switched[p] = true
	for c := range s.old.Parallelism {
		ch := s.channels[[2]int{p, c}]
		ch.items = append(ch.items, simItem{barrier: true, lastSeq: ch.seq})
	}
}

// deliver hands item i of ch to its consumer: the head, or a barrier that
// overtakes the items before it.
func (s *sim) deliver(ch *simChannel, i int) {
	it := ch.items[i]
	ch.items = slices.Delete(ch.items, i, i+1)
	c := s.cons[ch.consumer]
	if c.stopped {
		s.fatalf("%v delivered to stopped instance %d", it, ch.consumer)
	}
	if it.barrier {
		acts, err := c.task.Barrier(s.now, ch.producer, it.lastSeq)
		if err != nil {
			s.fatalf("barrier: %v", err)
		}
		// Copies of the overtaken buffers are what SetAside reads.
		s.taskActsWith(ch.consumer, acts, ch.items[:i])
		return
	}
	var groups []int
	for _, r := range it.buf.records {
		groups = append(groups, r.key%s.max)
	}
	d, acts, err := c.task.Buffer(s.now, ch.producer, it.buf.seq, groups)
	if err != nil {
		s.fatalf("buffer: %v", err)
	}
	for _, g := range d.Hold {
		if s.old.Owner(g) == s.new.Owner(g) {
			s.fatalf("instance %d paused group %d, which does not move", ch.consumer, g)
		}
	}
	for _, r := range it.buf.records {
		g := r.key % s.max
		switch {
		case slices.Contains(d.Drop, g):
		case slices.Contains(d.Hold, g):
			c.held[g] = append(c.held[g], r)
		default:
			s.apply(ch.consumer, r)
		}
	}
	ch.outstanding--
	s.taskActs(ch.consumer, acts)
}

// apply applies r to instance c's state and emits it downstream.
func (s *sim) apply(c int, r simRecord) {
	g := r.key % s.max
	st := s.cons[c].state
	if st[g] == nil {
		st[g] = map[int][]simRecord{}
	}
	st[g][r.key] = append(st[g][r.key], r)
	ch := s.outCh[[2]int{c, s.downTable.Owner(g)}]
	ch.seq++
	ch.items = append(ch.items, simItem{buf: &simBuffer{seq: ch.seq, records: []simRecord{r}}})
}

func (s *sim) taskActs(c int, acts []TaskAction) { s.taskActsWith(c, acts, nil) }

func (s *sim) taskActsWith(c int, acts []TaskAction, overtaken []simItem) {
	sc := s.cons[c]
	for _, a := range acts {
		switch a := a.(type) {
		case Switch:
			// Its outputs' routing does not change (down is not rescaled):
			// the barrier goes on every channel it had.
			for j := range s.down {
				ch := s.outCh[[2]int{c, j}]
				ch.items = append(ch.items, simItem{barrier: true, lastSeq: ch.seq})
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
			h := simHandoff{from: c, to: a.To, groups: a.Groups, state: map[int]map[int][]simRecord{}, records: map[int][]simRecord{}}
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
				s.apply(c, r)
			}
			delete(sc.carried, a.Group)
			for _, r := range sc.held[a.Group] {
				s.apply(c, r)
			}
			delete(sc.held, a.Group)
		case InputDrained:
			s.coordActs(s.coord.InputDrained(s.now, TaskKey{"op", c}, TaskKey{"src", a.Input}))
		case PauseInput:
			if sc.paused[a.Input] {
				s.fatalf("instance %d pauses input %d twice", c, a.Input)
			}
			sc.paused[a.Input] = true
		case ResumeInput:
			if !sc.paused[a.Input] {
				s.fatalf("instance %d resumes input %d, not paused", c, a.Input)
			}
			delete(sc.paused, a.Input)
		case TaskDone:
			acts, err := s.coord.TaskDone(s.now, TaskKey{"op", c}, a.Result)
			if err != nil {
				s.fatalf("task done: %v", err)
			}
			s.coordActs(acts)
		case Stop:
			for _, ch := range sc.inputs {
				if len(ch.items) > 0 {
					s.fatalf("instance %d stops with %d items queued from producer %d", c, len(ch.items), ch.producer)
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
	c := s.cons[h.to]
	for g, keys := range h.state {
		if c.state[g] != nil {
			s.fatalf("instance %d already has state of group %d", h.to, g)
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
	s.taskActs(h.to, acts[1:])
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
	for c, sc := range s.cons {
		if !sc.task.Done() {
			s.fatalf("instance %d not done", c)
		}
		if len(sc.held) > 0 || len(sc.aside) > 0 || len(sc.paused) > 0 || len(sc.carried) > 0 {
			s.fatalf("instance %d ends with held %v, set aside %v, paused %v, carried %v", c, sc.held, sc.aside, sc.paused, sc.carried)
		}
		if (c >= s.new.Parallelism) != sc.stopped {
			s.fatalf("instance %d stopped=%t, parallelism now %d", c, sc.stopped, s.new.Parallelism)
		}
	}
	for _, ch := range s.channels {
		if len(ch.items) > 0 || ch.outstanding != 0 {
			s.fatalf("channel %d→%d ends with %d items, %d outstanding", ch.producer, ch.consumer, len(ch.items), ch.outstanding)
		}
	}
	// Every group's state is at its new owner alone; per key and producer
	// the records applied are in the producer's order, none twice; and all
	// of them are there.
	applied := map[[2]int]bool{} // producer, n
	for c, sc := range s.cons {
		for g, keys := range sc.state {
			if s.new.Owner(g) != c {
				s.fatalf("state of group %d at instance %d, owner %d", g, c, s.new.Owner(g))
			}
			for key, rs := range keys {
				next := map[int]int{}
				for _, r := range rs {
					if r.key != key || r.key%s.max != g {
						s.fatalf("record %v in key %d's state of group %d", r, key, g)
					}
					if r.n < next[r.producer] {
						s.fatalf("key %d: producer %d's record %d applied after %d", key, r.producer, r.n, next[r.producer]-1)
					}
					next[r.producer] = r.n + 1
					id := [2]int{r.producer, r.n}
					if applied[id] {
						s.fatalf("record %v applied twice", r)
					}
					applied[id] = true
				}
			}
		}
	}
	if len(applied) != s.sent {
		s.fatalf("%d records applied, %d sent", len(applied), s.sent)
	}
	// Downstream, each key's records, per producer, arrive in order, once,
	// all of them, though they came from two instances across the rescale.
	for _, ch := range s.outCh {
		if len(ch.items) > 0 {
			s.fatalf("channel op[%d]→down[%d] ends with %d items", ch.producer, ch.consumer, len(ch.items))
		}
	}
	got := 0
	for j, d := range s.down {
		for key, rs := range d.state {
			if s.downTable.Owner(key%s.max) != j {
				s.fatalf("key %d at down[%d]", key, j)
			}
			next := map[int]int{}
			for _, r := range rs {
				if r.n < next[r.producer] {
					s.fatalf("downstream key %d: producer %d's record %d after %d (out of order or twice)", key, r.producer, r.n, next[r.producer]-1)
				}
				next[r.producer] = r.n + 1
				got++
			}
		}
	}
	if got != s.sent {
		s.fatalf("%d records downstream, %d sent", got, s.sent)
	}
}
