package rescale

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/weirstream/weir/keygroups"
)

// ErrProtocol is wrapped by the errors a Task returns for events the protocol
// rules out: a barrier twice, a buffer out of sequence, a record of a key
// group routed by the wrong table. The shell turns one into a failure of the
// rescale (the job recovers from its latest completed checkpoint).
var ErrProtocol = errors.New("rescale protocol violated")

// TaskConfig is one task's part in a rescale.
type TaskConfig struct {
	Rescale  uint64
	Instance int
	// Inputs is the number of input channels the task had before the
	// rescale, numbered 0..Inputs-1; each delivers one rescale barrier.
	// Channels the rescale wires get the numbers from Inputs on.
	Inputs int
	// Seen is, per input, the seq of the last buffer the task took before
	// the rescale began (nil or short: none).
	Seen []uint64
	// Retired are old inputs whose producer an earlier rescale removed: they
	// ended once the task had taken all they sent, and deliver no barrier,
	// so they count as having delivered it after Seen, drained.
	Retired []int
	// Source is true for a source: its barrier is injected (Inject).
	Source bool
	// Changed is true when the task's operator changes parallelism: it
	// reports TaskDone, and switches once every barrier is in (Keyed) or
	// once drained (not Keyed: it has no key groups to set aside, so it must
	// process all that came before its barriers first).
	Changed bool
	// Keyed is true for an operator with a key-group table.
	Keyed bool
	// Removed is true for an instance that goes away: it stops after TaskDone.
	Removed bool
	// HoldBytes is the budget of held records, in bytes over all inputs
	// (as Buffer is told them): once they reach it, an input that delivers
	// held records pauses (PauseInput) until releases bring them below it
	// (0: no limit). Until then no input pauses, however many buffers held
	// records came in: groups that do not move keep flowing while a slow
	// handoff's records wait. Held records then cost at most the budget and
	// one buffer per input.
	HoldBytes int64
	// Outputs is true for a task with output channels: a changed task then
	// releases a group moved from instance i only after Fence(i), when every
	// consumer has processed what i sent before its switch.
	Outputs bool
	// Out are the key groups moving away from this instance, In those moving
	// to it.
	Out, In []keygroups.Move
	// HandsStaged is true for a removed instance of a sink whose staged
	// output is handed off (Topology's HandsOff): once drained, before it
	// is done, it hands what it staged and has not committed to instance
	// StagedTo (HandStaged).
	HandsStaged bool
	StagedTo    int
	// StagedFrom are the removed instances whose staged output this
	// instance takes over: it is done only once each has arrived (Staged).
	StagedFrom []int
}

// TaskConfigFor is the part of instance of operator op in plan p; inputs is
// the number of input channels it has before the rescale (0 for an added
// instance).
func TaskConfigFor(p *Plan, op string, instance, inputs int) TaskConfig {
	topo := p.Input.Topology
	cfg := TaskConfig{Rescale: p.Input.Seq, Instance: instance, Inputs: inputs}
	if i := topo.index(op); i >= 0 {
		cfg.Source = topo.Operators[i].Source
	}
	for _, e := range topo.Edges {
		cfg.Outputs = cfg.Outputs || e.From == op
	}
	c, ok := p.Change(op)
	if !ok {
		return cfg
	}
	cfg.Changed = true
	cfg.Keyed = c.New != nil
	cfg.Removed = instance >= c.To
	if i := topo.index(op); i >= 0 && topo.Operators[i].StagesOutput && topo.Operators[i].HandsOff {
		if cfg.Removed {
			cfg.HandsStaged, cfg.StagedTo = true, StagedOwner(instance, c.To)
		}
		for r := c.To; r < c.From; r++ {
			if StagedOwner(r, c.To) == instance {
				cfg.StagedFrom = append(cfg.StagedFrom, r)
			}
		}
	}
	for _, m := range c.Moves {
		if m.From == instance {
			cfg.Out = append(cfg.Out, m)
		}
		if m.To == instance {
			cfg.In = append(cfg.In, m)
		}
	}
	return cfg
}

// Decision says what to do with one input buffer: process its records except
// those of Drop (set aside and handed off already) and of Hold (groups paused
// until their state arrives, kept in arrival order).
type Decision struct {
	Hold, Drop []int
}

// Task is one task's side of a rescale as a pure state machine: events in
// (Inject, Barrier, Buffer, Handoff, with logical time), actions out. See the
// package documentation for the rules it enforces.
type Task struct {
	cfg       TaskConfig
	out       map[int]int // moving-out group → new owner
	in        map[int]*incoming
	barrier   []bool
	lastSeq   []uint64
	seen      []uint64 // seq of the last buffer seen per input
	dropUpTo  []uint64 // buffers up to this seq lose their moving-out groups
	barriers  int
	drainedIn []bool // InputDrained reported
	fenced    map[int]bool
	switched  bool
	handed    bool
	staged    bool         // HandStaged given (or nothing to hand)
	stagedIn  map[int]bool // removed instances whose staged output arrived
	done      bool
	heldBytes map[int]int64 // held group → bytes of its held records
	heldTotal int64
	paused    map[int]bool
	result    TaskResult
}

// incoming is a group moving to this task.
type incoming struct {
	from      int
	arrived   bool
	released  bool
	held      bool
	heldSince time.Duration
}

// NewTask returns the task's machine for cfg.
func NewTask(cfg TaskConfig) (*Task, error) {
	if cfg.HoldBytes < 0 {
		return nil, fmt.Errorf("rescale %d task %d: hold budget %d bytes", cfg.Rescale, cfg.Instance, cfg.HoldBytes)
	}
	if cfg.Inputs < 0 {
		return nil, fmt.Errorf("rescale %d task %d: %d inputs", cfg.Rescale, cfg.Instance, cfg.Inputs)
	}
	if cfg.HandsStaged && (!cfg.Removed || cfg.StagedTo < 0) {
		return nil, fmt.Errorf("rescale %d task %d: hands its staged output to instance %d, removed=%t", cfg.Rescale, cfg.Instance, cfg.StagedTo, cfg.Removed)
	}
	if cfg.Source && cfg.Inputs > 0 {
		return nil, fmt.Errorf("rescale %d task %d: a source with %d inputs", cfg.Rescale, cfg.Instance, cfg.Inputs)
	}
	t := &Task{cfg: cfg, out: map[int]int{}, in: map[int]*incoming{},
		barrier: make([]bool, cfg.Inputs), lastSeq: make([]uint64, cfg.Inputs), dropUpTo: make([]uint64, cfg.Inputs),
		drainedIn: make([]bool, cfg.Inputs), fenced: map[int]bool{}, heldBytes: map[int]int64{}, paused: map[int]bool{},
		staged: !cfg.HandsStaged, stagedIn: map[int]bool{}}
	for i, seq := range cfg.Seen {
		t.markSeen(i, seq)
	}
	for _, i := range cfg.Retired {
		if i < 0 || i >= cfg.Inputs || t.barrier[i] {
			return nil, fmt.Errorf("rescale %d task %d: retired input %d of %d inputs, or named twice", cfg.Rescale, cfg.Instance, i, cfg.Inputs)
		}
		t.barrier[i], t.lastSeq[i], t.drainedIn[i] = true, t.seenOn(i), true
		t.barriers++
	}
	for _, m := range cfg.Out {
		t.out[m.Group] = m.To
	}
	for _, m := range cfg.In {
		t.in[m.Group] = &incoming{from: m.From}
	}
	// An added instance has no old output to switch and hands nothing off.
	t.switched = cfg.Inputs == 0 && !cfg.Source
	t.handed = len(cfg.Out) == 0
	return t, nil
}

// Config returns the task's part as it was given.
func (t *Task) Config() TaskConfig { return t.cfg }

// Done reports whether the task has finished its part.
func (t *Task) Done() bool { return t.done }

// HoldsEnd reports whether the task must not end yet even if its inputs
// have: it is an instance of a changed operator that has not done its part
// (it may still hand off, receive or release key groups).
func (t *Task) HoldsEnd() bool { return t.cfg.Changed && !t.done }

func (t *Task) errorf(format string, args ...any) error {
	return fmt.Errorf("rescale %d task %d: %s: %w", t.cfg.Rescale, t.cfg.Instance, fmt.Sprintf(format, args...), ErrProtocol)
}

// Begin is the task taking part once it is wired: an added instance of a
// stateless operator is done at once; any other task gets nothing to do yet.
func (t *Task) Begin(now time.Duration) []TaskAction { return t.progress(now) }

// Inject is the rescale barrier reaching a source: it switches at once.
func (t *Task) Inject(now time.Duration) ([]TaskAction, error) {
	if !t.cfg.Source {
		return nil, t.errorf("barrier injected into a task that is not a source")
	}
	if t.switched {
		return nil, t.errorf("barrier injected twice")
	}
	t.switched = true
	return []TaskAction{Switch{Rescale: t.cfg.Rescale}}, nil
}

// Barrier is the rescale barrier arriving on input, after lastSeq, the seq of
// the last buffer its producer sent there before switching. If buffers up to
// lastSeq have not been seen yet, the barrier overtook them and came with
// their copies.
func (t *Task) Barrier(now time.Duration, input int, lastSeq uint64) ([]TaskAction, error) {
	if input < 0 || input >= t.cfg.Inputs {
		return nil, t.errorf("barrier on input %d, which did not exist before the rescale (%d inputs)", input, t.cfg.Inputs)
	}
	if t.barrier[input] {
		return nil, t.errorf("second barrier on input %d", input)
	}
	seen := t.seenOn(input)
	if lastSeq < seen {
		return nil, t.errorf("barrier on input %d after seq %d, but seq %d was seen before it", input, lastSeq, seen)
	}
	t.barrier[input], t.lastSeq[input] = true, lastSeq
	t.barriers++
	var acts []TaskAction
	if seen < lastSeq && len(t.out) > 0 {
		t.dropUpTo[input] = lastSeq
		acts = append(acts, SetAside{Input: input, AfterSeq: seen, LastSeq: lastSeq, Groups: t.outGroups()})
	}
	if !t.cfg.Changed && !t.switched {
		t.switched = true
		acts = append(acts, Switch{Rescale: t.cfg.Rescale})
	}
	if t.barriers == t.cfg.Inputs && !t.handed {
		t.handed = true
		acts = append(acts, t.handoffs()...)
	}
	return append(acts, t.progress(now)...), nil
}

// Buffer is buffer seq of input about to be processed; groups are the key
// groups of its records (any order, repeats allowed) and bytes, if not nil,
// the size of the buffer's records of each (bytes[i] of groups[i]), which
// HoldBytes counts. Buffers arrive in seq order per input, starting at 1.
func (t *Task) Buffer(now time.Duration, input int, seq uint64, groups []int, bytes []int64) (Decision, []TaskAction, error) {
	if bytes != nil && len(bytes) != len(groups) {
		return Decision{}, nil, fmt.Errorf("rescale %d task %d: %d sizes for %d key groups", t.cfg.Rescale, t.cfg.Instance, len(bytes), len(groups))
	}
	if input < 0 {
		return Decision{}, nil, t.errorf("buffer on input %d", input)
	}
	if want := t.seenOn(input) + 1; seq != want {
		return Decision{}, nil, t.errorf("input %d: buffer seq %d where %d was due: lost or reordered", input, seq, want)
	}
	old := input < t.cfg.Inputs
	pre := old && (!t.barrier[input] || seq <= t.lastSeq[input])
	var d Decision
	var held int64
	for k, g := range groups {
		to, moving := t.out[g]
		inc := t.in[g]
		switch {
		case pre && inc != nil:
			return Decision{}, nil, t.errorf("input %d seq %d: key group %d, which moves here, routed here by the old table", input, seq, g)
		case pre && moving && seq <= t.dropUpTo[input]:
			d.Drop = appendOnce(d.Drop, g)
		case !pre && moving:
			return Decision{}, nil, t.errorf("input %d seq %d: key group %d, which moved to instance %d, arrived after the rescale barrier", input, seq, g, to)
		case !pre && inc != nil && !inc.released:
			if !inc.held {
				inc.held, inc.heldSince = true, now
			}
			d.Hold = appendOnce(d.Hold, g)
			if bytes != nil {
				t.heldBytes[g] += bytes[k]
				held += bytes[k]
			}
		}
	}
	t.markSeen(input, seq)
	t.heldTotal += held
	var acts []TaskAction
	if len(d.Hold) > 0 && t.cfg.HoldBytes > 0 && !t.paused[input] && t.heldTotal >= t.cfg.HoldBytes {
		t.paused[input] = true
		acts = append(acts, PauseInput{Input: input, HeldBytes: t.heldTotal})
	}
	return d, append(acts, t.progress(now)...), nil
}

// Fence says every consumer of this operator's outputs has processed all
// that instance from sent before its switch: outputs of the groups moved
// from it may follow. It is idempotent.
func (t *Task) Fence(now time.Duration, from int) []TaskAction {
	t.fenced[from] = true
	return t.progress(now)
}

// Handoff is the state of groups (bytes in all) and the records set aside
// with it arriving from instance from.
func (t *Task) Handoff(now time.Duration, from int, groups []int, bytes int64) ([]TaskAction, error) {
	for _, g := range groups {
		inc := t.in[g]
		if inc == nil || inc.from != from {
			return nil, t.errorf("handoff of key group %d from instance %d, which the plan does not move here from there", g, from)
		}
		if inc.arrived {
			return nil, t.errorf("key group %d handed off twice", g)
		}
		inc.arrived = true
	}
	t.result.Received += len(groups)
	t.result.Bytes += bytes
	acts := []TaskAction{Restore{From: from, Groups: slices.Clone(groups)}}
	return append(acts, t.progress(now)...), nil
}

// Staged is the staged output of removed instance from (bytes in all)
// arriving (its HandStaged): the task takes it over.
func (t *Task) Staged(now time.Duration, from int, bytes int64) ([]TaskAction, error) {
	if !slices.Contains(t.cfg.StagedFrom, from) {
		return nil, t.errorf("staged output of instance %d, which the plan does not hand here", from)
	}
	if t.stagedIn[from] {
		return nil, t.errorf("staged output of instance %d handed over twice", from)
	}
	t.stagedIn[from] = true
	t.result.Bytes += bytes
	return append([]TaskAction{TakeStaged{From: from}}, t.progress(now)...), nil
}

// progress reports drained inputs, switches a changed task once drained,
// releases arrived groups once switched and fenced, hands a removed sink's
// staged output off once drained, and finishes once every removed
// instance's staged output it takes over has arrived.
func (t *Task) progress(now time.Duration) []TaskAction {
	var acts []TaskAction
	for i := range t.cfg.Inputs {
		if !t.drainedIn[i] && t.barrier[i] && t.seenOn(i) >= t.lastSeq[i] {
			t.drainedIn[i] = true
			acts = append(acts, InputDrained{Input: i})
		}
	}
	if t.done {
		return acts
	}
	if t.cfg.Changed && !t.switched && (t.drained() || t.cfg.Keyed && t.barriers == t.cfg.Inputs) {
		t.switched = true
		acts = append(acts, Switch{Rescale: t.cfg.Rescale})
	}
	if !t.switched {
		return acts
	}
	waiting := 0
	for _, g := range sortedKeys(t.in) {
		inc := t.in[g]
		if inc.released {
			continue
		}
		if !inc.arrived || (t.cfg.Outputs && !t.fenced[inc.from]) {
			waiting++
			continue
		}
		inc.released = true
		var waited time.Duration
		if inc.held {
			waited = now - inc.heldSince
		}
		t.result.LongestPause = max(t.result.LongestPause, waited)
		acts = append(acts, Release{Group: g, Waited: waited})
		acts = append(acts, t.unhold(g)...)
	}
	if !t.staged && t.drained() {
		// Every record it will write is written: what it staged is whole.
		t.staged = true
		acts = append(acts, HandStaged{To: t.cfg.StagedTo})
	}
	if t.cfg.Changed && waiting == 0 && t.handed && t.staged && len(t.stagedIn) == len(t.cfg.StagedFrom) && t.drained() {
		t.done = true
		acts = append(acts, TaskDone{Rescale: t.cfg.Rescale, Result: t.result})
		if t.cfg.Removed {
			acts = append(acts, Stop{})
		}
	}
	return acts
}

// drained reports whether every old input has delivered its barrier and
// every buffer sent before it.
func (t *Task) drained() bool {
	if t.barriers < t.cfg.Inputs {
		return false
	}
	for i := 0; i < t.cfg.Inputs; i++ {
		if t.seenOn(i) < t.lastSeq[i] {
			return false
		}
	}
	return true
}

// handoffs is one Handoff per new owner of the moving-out groups.
func (t *Task) handoffs() []TaskAction {
	byTo := map[int][]int{}
	for _, g := range t.outGroups() {
		byTo[t.out[g]] = append(byTo[t.out[g]], g)
	}
	var acts []TaskAction
	for _, to := range sortedKeys(byTo) {
		acts = append(acts, Handoff{To: to, Groups: byTo[to]})
	}
	return acts
}

// unhold forgets group g's held bytes and, once the held records are
// below the budget, resumes the paused inputs.
func (t *Task) unhold(g int) []TaskAction {
	t.heldTotal -= t.heldBytes[g]
	delete(t.heldBytes, g)
	if t.heldTotal >= t.cfg.HoldBytes {
		return nil
	}
	var acts []TaskAction
	for _, in := range sortedKeys(t.paused) {
		delete(t.paused, in)
		acts = append(acts, ResumeInput{Input: in})
	}
	return acts
}

func (t *Task) outGroups() []int { return sortedKeys(t.out) }

func (t *Task) seenOn(input int) uint64 {
	if input < len(t.seen) {
		return t.seen[input]
	}
	return 0
}

func (t *Task) markSeen(input int, seq uint64) {
	for len(t.seen) <= input {
		t.seen = append(t.seen, 0)
	}
	t.seen[input] = seq
}

func appendOnce(xs []int, x int) []int {
	if slices.Contains(xs, x) {
		return xs
	}
	return append(xs, x)
}

func sortedKeys[V any](m map[int]V) []int {
	ks := make([]int, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
