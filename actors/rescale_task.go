package actors

import (
	"time"

	"fmt"
	"slices"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/weirstream/weir/actors/mailbox"
	"github.com/weirstream/weir/barriers"
	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/rescale"
)

// taskRescale is a task's part in a live rescale: the rescale.Task machine
// and what carrying out its actions keeps.
type taskRescale struct {
	m       *rescale.Task
	next    *plan.Operator // the task's operator after the rescale
	outputs [][]*actor.PID // per output edge, the channels to switch to (nil: none)
	peers   []*actor.PID   // the operator's instances, handoff targets
	// groups finds records' key groups, per input edge (nil: none needed).
	groups   []plan.RecordGroups
	deferred []any                // rescale messages waiting for the buffer in progress
	after    []rescale.TaskAction // actions of the buffer in progress
	aside    map[int][]heldBatch  // group → records set aside for its handoff
	carried  map[int][]heldBatch  // group → records that came with its handoff
	held     map[int][]heldBatch  // group → records held until its release
	paused   map[int]bool         // inputs paused at the hold limit
	// overtaken and handoff are the barrier's copies and the handoff being
	// carried out (SetAside and Restore read them).
	overtaken []*Buffer
	handoff   *rescaleHandoffMsg
	// barred are the inputs whose barrier the machine took.
	barred []int
	// encoding are the handoffs whose frozen groups are being encoded,
	// staging those received whose state is being decoded.
	encoding []*handoffInFlight
	staging  []*rescaleHandoffMsg
	staged   map[*rescaleHandoffMsg]plan.StagedGroups
	// stagedIn is the removed sink instance's staged output being taken
	// over (TakeStaged reads it).
	stagedIn *rescaleStagedMsg
}

// onRescaleMsg handles the live-rescale messages. A stopping task takes
// none: a channel spawned now would outlive its stop (the actor waits for
// its children), and the rescale is being aborted anyway.
func (t *task) onRescaleMsg(ctx actor.Context, m any) {
	if t.phase.work == workStopping {
		return
	}
	if b, ok := m.(*rescaleBarrierOvertakeMsg); ok && t.late.take(b.input) {
		t.takeLateBarrier(b)
		return
	}
	switch m := m.(type) {
	case *rescaleAddInputsMsg:
		t.rescaleAddInputs(ctx, m)
	case *rescaleBeginMsg:
		t.rescaleBegin(ctx, m)
	case *rescaleInjectMsg:
		if t.rs == nil {
			t.fail(fmt.Errorf("rescale barrier injected before the rescale began"))
		}
		acts, err := t.rs.m.Inject(t.now())
		t.rescaleCarryOut(ctx, acts, err)
	case *rescaleEndMsg:
		if t.rs != nil {
			t.late.expect(t.rs, t.retired.inputs)
		}
		t.rs = nil
		fresh := t.retired.add(m.retired)
		t.unlistenRetired(fresh)
		for _, oe := range t.out.edges {
			if err := dropRetired(oe); err != nil {
				t.fail(err)
			}
		}
		t.feedRetiredInProgress(ctx, fresh)
	case *rescaleHandoffEncodedMsg:
		t.rescaleHandoffEncoded(ctx, m)
	case *rescaleHandoffStagedMsg:
		t.rescaleHandoffStaged(ctx, m)
	case *rescaleBarrierOvertakeMsg, *rescaleHandoffMsg, *rescaleFenceMsg, *rescaleStagedMsg:
		if t.rs == nil {
			t.fail(fmt.Errorf("rescale message %T outside a rescale", m))
		}
		if h, ok := m.(*rescaleHandoffMsg); ok && t.rescaleStageHandoff(ctx, h) {
			return
		}
		t.rescaleTake(ctx, m)
	}
}

// rescaleTake feeds a barrier, a handoff, a fence or a removed sink's staged
// output to the machine, or keeps
// it until the buffer in progress is processed.
func (t *task) rescaleTake(ctx actor.Context, m any) {
	if t.rescaleBusy() {
		t.rs.deferred = append(t.rs.deferred, m)
		return
	}
	t.rescaleEvent(ctx, m)
}

// rescaleBusy reports whether a buffer is in progress (the machine took it,
// the operator has not processed all of it yet) or restored channel state
// is still to be replayed: that data came before any rescale barrier and
// passes no machine, so the rescale's events wait until it is processed.
func (t *task) rescaleBusy() bool {
	for _, c := range t.in.chans {
		if c.cur != nil || len(c.replay) > 0 {
			return true
		}
	}
	return false
}

// rescaleEvent feeds a barrier, a handoff or a fence to the machine.
func (t *task) rescaleEvent(ctx actor.Context, m any) {
	var acts []rescale.TaskAction
	var err error
	switch m := m.(type) {
	case *rescaleBarrierOvertakeMsg:
		t.rs.barred = append(t.rs.barred, m.input)
		t.rs.overtaken = m.overtaken
		acts, err = t.rs.m.Barrier(t.now(), m.input, m.lastSeq)
		defer func() { t.rs.overtaken = nil }()
	case *rescaleHandoffMsg:
		t.rs.handoff = m
		acts, err = t.rs.m.Handoff(t.now(), m.from, m.groups, m.bytes)
		defer func() { t.rs.handoff = nil }()
	case *rescaleFenceMsg:
		acts = t.rs.m.Fence(t.now(), m.from)
	case *rescaleStagedMsg:
		t.rs.stagedIn = m
		acts, err = t.rs.m.Staged(t.now(), m.from, int64(len(m.state)))
		defer func() { t.rs.stagedIn = nil }()
	}
	t.rescaleCarryOut(ctx, acts, err)
	t.schedulePump(ctx)
}

// rescaleAddInputs spawns an input channel per added producer instance.
func (t *task) rescaleAddInputs(ctx actor.Context, m *rescaleAddInputsMsg) {
	edge := t.op.Inputs[m.edge]
	var pids []*actor.PID
	for _, j := range m.producers {
		input := len(t.in.chans)
		name := fmt.Sprintf("%s[%d]→%s", edge.From.Name, j, t.name)
		props := actor.PropsFromProducer(func() actor.Actor { return newChannel(t.job, name, ctx.Self(), input) },
			actor.WithMailbox(mailbox.New()), actor.WithDispatcher(t.job.node.dispatcher))
		pid, err := ctx.SpawnNamed(props, fmt.Sprintf("in-%s-%d-r%d", edge.From.Name, j, m.seq))
		if err != nil {
			t.fail(fmt.Errorf("spawn input channel %s: %w", name, err))
		}
		t.in.add(pid, m.edge)
		if err := t.listenChannel(pid, edge, j); err != nil {
			t.fail(fmt.Errorf("rescale: input channel %s: %w", name, err))
		}
		pids = append(pids, pid)
	}
	if t.aligner != nil {
		// Checkpoints wait while a rescale runs: the aligner is between two.
		consumed := make([]uint64, len(t.in.chans))
		for i, c := range t.in.chans {
			consumed[i] = takenSeq(c)
		}
		if err := t.aligner.Rebuild(consumed); err != nil {
			t.fail(fmt.Errorf("rescale: add inputs: %w", err))
		}
	}
	ctx.Send(ctx.Parent(), &rescaleInputsAddedMsg{seq: m.seq, op: t.op.ID, instance: t.instance, edge: m.edge, producers: m.producers, pids: pids})
}

// takenSeq is the seq of the last buffer of input c taken from its channel
// (processed, or in progress); restored channel state does not count.
func takenSeq(c *inChannel) uint64 {
	if c.cur != nil && !c.curReplay {
		return c.cur.Seq
	}
	return c.last
}

// rescaleBegin makes the task's machine.
func (t *task) rescaleBegin(ctx actor.Context, m *rescaleBeginMsg) {
	cfg := m.cfg
	cfg.Seen = make([]uint64, len(t.in.chans))
	for i, c := range t.in.chans {
		cfg.Seen[i] = takenSeq(c)
	}
	for _, i := range t.retired.inputs {
		if i < cfg.Inputs {
			cfg.Retired = append(cfg.Retired, i)
		}
	}
	mach, err := rescale.NewTask(cfg)
	if err != nil {
		t.fail(err)
	}
	rs := &taskRescale{m: mach, next: m.next, outputs: m.outputs, peers: m.peers,
		aside: map[int][]heldBatch{}, carried: map[int][]heldBatch{}, held: map[int][]heldBatch{}, paused: map[int]bool{},
		staged: map[*rescaleHandoffMsg]plan.StagedGroups{}}
	if len(cfg.Out) > 0 || len(cfg.In) > 0 {
		rs.groups = make([]plan.RecordGroups, len(t.op.Inputs))
		for e, edge := range t.op.Inputs {
			if edge.Groups == nil {
				t.fail(fmt.Errorf("rescale: input %s → %s has no key groups, and key groups move", edge.From.Name, edge.To.Name))
			}
			if rs.groups[e], err = edge.Groups(t.job.Plan.MaxParallelism); err != nil {
				t.fail(fmt.Errorf("rescale: input %s → %s: %w", edge.From.Name, edge.To.Name, err))
			}
		}
	}
	t.rs = rs
	t.rescaleHoldLeaving(cfg)
	if m.ack {
		ctx.Send(ctx.Parent(), &rescaleBegunMsg{seq: cfg.Rescale, op: t.op.ID, instance: t.instance})
	}
	t.rescaleCarryOut(ctx, mach.Begin(t.now()), nil)
}

// rescalePaused reports whether input i is paused at the hold limit.
func (t *task) rescalePaused(i int) bool { return t.rs != nil && t.rs.paused[i] }

// rescaleFilter feeds the buffer just taken on input i to the machine and
// keeps out of it the records the machine holds or drops. The machine's
// actions wait until the buffer is processed (rescaleAfterBuffer).
func (t *task) rescaleFilter(i int, c *inChannel) {
	if t.rs == nil {
		return
	}
	b := c.cur
	var of []int // key group of each record
	var groups []int
	var bytes []int64 // of groups' records, for the hold budget
	if t.rs.groups != nil {
		rg := t.rs.groups[c.edgeIndex]
		n := b.Records.Len()
		per := recordBytes(b.Records)
		of = make([]int, n)
		for k := 0; k < n; k++ {
			g, err := rg.Group(b.Records, k)
			if err != nil {
				t.fail(fmt.Errorf("rescale: input %d buffer %d: %w", i, b.Seq, err))
			}
			of[k] = g
			if j := slices.Index(groups, g); j >= 0 {
				bytes[j] += per
			} else {
				groups = append(groups, g)
				bytes = append(bytes, per)
			}
		}
	}
	d, acts, err := t.rs.m.Buffer(t.now(), i, b.Seq, groups, bytes)
	if err != nil {
		t.fail(err)
	}
	t.rs.after = append(t.rs.after, acts...)
	b.moved = t.flowMovedKept(of, d)
	if len(d.Hold) == 0 && len(d.Drop) == 0 {
		return
	}
	rg := t.rs.groups[c.edgeIndex]
	var keep []int
	hold := map[int][]int{}
	for k, g := range of {
		switch {
		case slices.Contains(d.Drop, g):
		case slices.Contains(d.Hold, g):
			hold[g] = append(hold[g], k)
		default:
			keep = append(keep, k)
		}
	}
	for _, g := range d.Hold {
		recs, err := rg.Pick(b.Records, hold[g])
		if err != nil {
			t.fail(fmt.Errorf("rescale: hold key group %d: %w", g, err))
		}
		t.rs.held[g] = append(t.rs.held[g], heldBatch{edge: c.edgeIndex, recs: recs, at: b.arrived, origin: b.origin})
	}
	kept, err := rg.Pick(b.Records, keep)
	if err != nil {
		t.fail(fmt.Errorf("rescale: input %d buffer %d: %w", i, b.Seq, err))
	}
	c.cur = &Buffer{Seq: b.Seq, Records: kept, round: b.round, arrived: b.arrived, moved: b.moved, origin: b.origin}
}

// rescaleAfterBuffer carries out the actions of the buffer just processed,
// then the rescale messages that waited for it.
func (t *task) rescaleAfterBuffer(ctx actor.Context) {
	if t.rs == nil {
		return
	}
	acts := t.rs.after
	t.rs.after = nil
	t.rescaleCarryOut(ctx, acts, nil)
	for t.rs != nil && len(t.rs.deferred) > 0 && !t.rescaleBusy() {
		m := t.rs.deferred[0]
		t.rs.deferred = t.rs.deferred[1:]
		t.rescaleEvent(ctx, m)
	}
}

// rescaleCarryOut performs the machine's actions in order.
func (t *task) rescaleCarryOut(ctx actor.Context, acts []rescale.TaskAction, err error) {
	if err != nil {
		t.fail(err)
	}
	rs := t.rs
	for _, a := range acts {
		switch a := a.(type) {
		case rescale.Switch:
			if rs.outputs != nil {
				if err := t.listenCreditsOf(ctx, rs.next); err != nil {
					t.fail(fmt.Errorf("rescale switch: %w", err))
				}
				if err := t.out.rescaleSwitch(ctx, rs.next, rs.outputs); err != nil {
					t.fail(err)
				}
			}
		case rescale.SetAside:
			t.rescaleSetAside(a)
		case rescale.Handoff:
			t.rescaleHandoff(ctx, a)
		case rescale.Restore:
			t.rescaleRestore(a)
		case rescale.Release:
			t.out.ctx = ctx
			for _, hb := range append(rs.carried[a.Group], rs.held[a.Group]...) {
				t.callOperator(hb.edge, hb.recs)
			}
			t.flowReleased(time.Now(), rs.held[a.Group], rs.carried[a.Group])
			delete(rs.carried, a.Group)
			delete(rs.held, a.Group)
			t.rescaleReleased(a.Group)
			t.log.Debug().Int("group", a.Group).Dur("waited", a.Waited).Msg("rescale: key group released")
		case rescale.PauseInput:
			rs.paused[a.Input] = true
			t.log.Info().Int("input", a.Input).Int64("held_bytes", a.HeldBytes).Int64("budget_bytes", rs.m.Config().HoldBytes).
				Msg("rescale: held records of moving key groups reached the budget: input paused until a group is released")
		case rescale.ResumeInput:
			delete(rs.paused, a.Input)
			t.schedulePump(ctx)
		case rescale.InputDrained:
			ctx.Send(ctx.Parent(), &rescaleDrainedMsg{seq: rs.m.Config().Rescale, op: t.op.ID, instance: t.instance, input: a.Input})
		case rescale.HandStaged:
			t.rescaleHandStaged(ctx, a)
		case rescale.TakeStaged:
			t.rescaleTakeStaged(a)
		case rescale.TaskDone:
			ctx.Send(ctx.Parent(), &rescaleTaskDoneMsg{seq: a.Rescale, op: t.op.ID, instance: t.instance, result: t.flowResult(a.Result)})
			t.schedulePump(ctx) // it may end now if its inputs have
		case rescale.Stop:
			t.log.Debug().Msg("rescale: removed instance stops")
			t.finish(ctx)
		}
	}
}

// rescaleSetAside keeps, from the barrier's overtaken copies, the records of
// the groups that leave.
func (t *task) rescaleSetAside(a rescale.SetAside) {
	rs := t.rs
	edge := t.in.chans[a.Input].edgeIndex
	rg := rs.groups[edge]
	for _, b := range rs.overtaken {
		if b.Seq <= a.AfterSeq || b.Seq > a.LastSeq {
			continue
		}
		idx := map[int][]int{}
		for k := 0; k < b.Records.Len(); k++ {
			g, err := rg.Group(b.Records, k)
			if err != nil {
				t.fail(fmt.Errorf("rescale: set aside from input %d buffer %d: %w", a.Input, b.Seq, err))
			}
			if slices.Contains(a.Groups, g) {
				idx[g] = append(idx[g], k)
			}
		}
		for _, g := range a.Groups {
			if len(idx[g]) == 0 {
				continue
			}
			recs, err := rg.Pick(b.Records, idx[g])
			if err != nil {
				t.fail(fmt.Errorf("rescale: set aside key group %d: %w", g, err))
			}
			rs.aside[g] = append(rs.aside[g], heldBatch{edge: edge, recs: recs, at: deliveredAt(b), origin: b.origin})
		}
	}
}

// rescaleHandoff sends groups' state and the records set aside for them to
// their new owner, and drops them here. The state is encoded off the task's
// goroutine when the instance can freeze it (rescaleHandoffAsync), so the
// groups that stay never pause for it.
func (t *task) rescaleHandoff(ctx actor.Context, a rescale.Handoff) {
	rs := t.rs
	if a.To < 0 || a.To >= len(rs.peers) || rs.peers[a.To] == nil {
		t.fail(fmt.Errorf("rescale: hand off to instance %d, which is not running", a.To))
	}
	m := &rescaleHandoffMsg{from: t.instance, groups: a.Groups, records: map[int][]heldBatch{}}
	for _, g := range a.Groups {
		m.records[g] = rs.aside[g]
		delete(rs.aside, g)
	}
	if t.rescaleHandoffAsync(ctx, a.To, m) {
		return
	}
	if mover, ok := t.inst.(plan.GroupMover); ok {
		blobs, err := mover.ExportGroups(a.Groups)
		if err != nil {
			t.fail(fmt.Errorf("rescale: hand off key groups %v: %w", a.Groups, err))
		}
		m.blobs = blobs
		for _, b := range blobs {
			m.bytes += int64(len(b))
		}
	} else if t.op.Keyed {
		t.fail(fmt.Errorf("rescale: keyed instance %T cannot hand key groups off", t.inst))
	}
	t.rescaleSendHandoff(ctx, a.To, m)
}

// rescaleSendHandoff sends a handoff to instance to.
func (t *task) rescaleSendHandoff(ctx actor.Context, to int, m *rescaleHandoffMsg) {
	ctx.Send(t.rs.peers[to], m)
}

// rescaleRestore installs the state of the handoff being carried out and
// keeps its records for the release.
func (t *task) rescaleRestore(a rescale.Restore) {
	rs := t.rs
	h := rs.handoff
	if staged, ok := rs.staged[h]; ok {
		delete(rs.staged, h)
		if err := staged.Commit(); err != nil {
			t.fail(fmt.Errorf("rescale: restore key groups %v from instance %d: %w", a.Groups, a.From, err))
		}
	} else if mover, ok := t.inst.(plan.GroupMover); ok {
		if err := mover.ImportGroups(a.Groups, h.blobs); err != nil {
			t.fail(fmt.Errorf("rescale: restore key groups %v from instance %d: %w", a.Groups, a.From, err))
		}
	} else if len(h.blobs) > 0 {
		t.fail(fmt.Errorf("rescale: instance %T cannot take key groups' state", t.inst))
	}
	for _, g := range a.Groups {
		rs.carried[g] = h.records[g]
	}
}

// retiredInputs are a task's inputs from instances that live rescales
// removed: they ended, and deliver no more barriers. The task gives the
// aligner their barrier of each checkpoint itself, at the first real one.
type retiredInputs struct {
	inputs []int
	fed    uint64 // newest checkpoint whose barriers they were given
}

// add records inputs as retired and returns those not retired before: an
// instance removed, added again and removed again names its first
// incarnation's input, retired already, as well as its new one.
func (r *retiredInputs) add(inputs []int) []int {
	var fresh []int
	for _, i := range inputs {
		if !slices.Contains(r.inputs, i) {
			r.inputs = append(r.inputs, i)
			fresh = append(fresh, i)
		}
	}
	return fresh
}

// feedRetired gives the aligner the barrier of checkpoint id on every
// retired input, once per checkpoint: in order, after all they delivered.
func (t *task) feedRetired(ctx actor.Context, id uint64, final bool) {
	if len(t.retired.inputs) == 0 || id <= t.retired.fed || t.aligner == nil {
		return
	}
	t.retired.fed = id
	for _, i := range t.retired.inputs {
		t.feedRetiredBarrier(ctx, i, id, final)
	}
}

// feedRetiredInProgress gives the aligner, for each checkpoint in progress,
// the barrier of every input of inputs (just retired) it waits for. In a
// cluster the first barrier of the checkpoint triggered as a rescale
// commits can reach the task before the commit's end message, which
// retires the inputs from removed instances; they deliver no barrier.
func (t *task) feedRetiredInProgress(ctx actor.Context, inputs []int) {
	if len(inputs) == 0 || t.aligner == nil {
		return
	}
	for _, id := range t.aligner.InProgressIDs() {
		for _, i := range inputs {
			if awaits, final := t.aligner.Awaits(id, i); awaits {
				t.feedRetiredBarrier(ctx, i, id, final)
			}
		}
		// Older retired inputs had it at the checkpoint's first barrier.
		t.retired.fed = max(t.retired.fed, id)
	}
}

// feedRetiredBarrier gives the aligner the barrier of checkpoint id on
// retired input i, after all it delivered.
func (t *task) feedRetiredBarrier(ctx actor.Context, i int, id uint64, final bool) {
	last := takenSeq(t.in.chans[i])
	var acts []barriers.Action
	var err error
	if final {
		acts, err = t.aligner.OnFinalBarrier(i, id, last, t.now())
	} else {
		acts, err = t.aligner.OnBarrier(i, id, last, false, t.now())
	}
	if err != nil {
		t.fail(fmt.Errorf("barrier %d on retired input %d: %w", id, i, err))
	}
	t.carryOut(ctx, acts, nil)
}
