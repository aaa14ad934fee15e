package actors

import (
	"github.com/weirstream/weir/actors/mailbox"
)

// dumpJobMsg asks the job actor for its part of a dump and its tasks.
type dumpJobMsg struct {
	priority
	lanes mailbox.Lengths
	reply chan dumpJobReply
}

// MailboxLengths is stamped by the mailbox before delivery.
func (m *dumpJobMsg) MailboxLengths(l mailbox.Lengths) { m.lanes = l }

type dumpJobReply struct {
	coord   CoordinatorDump
	targets []dumpTarget
}

// dumpTaskMsg asks a task for its part of a dump.
type dumpTaskMsg struct {
	priority
	lanes mailbox.Lengths
	reply chan TaskDump
}

// MailboxLengths is stamped by the mailbox before delivery.
func (m *dumpTaskMsg) MailboxLengths(l mailbox.Lengths) { m.lanes = l }

// dumpChannelMsg asks a channel for its state.
type dumpChannelMsg struct {
	priority
	lanes mailbox.Lengths
	reply chan ChannelDump
}

// MailboxLengths is stamped by the mailbox before delivery.
func (m *dumpChannelMsg) MailboxLengths(l mailbox.Lengths) { m.lanes = l }

// dump answers a dumpJobMsg; the reply channel has room, so it never blocks.
func (a *jobActor) dump(m *dumpJobMsg) {
	c := CoordinatorDump{Tasks: a.total, Ready: a.ready, Finished: a.finished, Wired: a.wired,
		Draining: a.draining, Ended: a.ended, Mailbox: m.lanes}
	if k := a.ckpt; k != nil {
		if id, ok := k.coord.Pending(); ok {
			c.PendingCheckpoint = id
			c.Acks = len(k.acks[id])
		}
		if id, ok := k.coord.Writing(); ok {
			c.WritingManifest = id
		}
		if done := k.coord.Completed(); len(done) > 0 {
			c.LastCompleted = done[len(done)-1]
		}
		c.FinalDone, c.IdleSources = k.coord.FinalDone(), k.coord.IdleSources()
	}
	if a.sv != nil {
		for r := 0; ; r++ {
			st, ok := a.sv.sup.State(r)
			if !ok {
				break
			}
			alive, readying, due := a.sv.sup.RunCounts(r)
			c.Regions = append(c.Regions, RegionDump{Region: r, State: st.String(), Alive: alive,
				Readying: readying, RestartDue: due})
		}
	}
	var targets []dumpTarget
	for _, op := range a.job.Plan.Operators {
		if op.ID >= len(a.tasks) {
			break
		}
		for i, pid := range a.tasks[op.ID] {
			tg := dumpTarget{name: taskName(op, i), pid: pid, stopped: pid == nil}
			if pid != nil && a.isRemote(op.ID, i) {
				tg.pid = nil
			} else {
				tg.inputs = a.inputs[op.ID][i]
			}
			targets = append(targets, tg)
		}
	}
	m.reply <- dumpJobReply{coord: c, targets: targets}
}

// dump answers a dumpTaskMsg.
func (t *task) dump(m *dumpTaskMsg) {
	d := TaskDump{Task: t.name, Gen: t.gen, Mailbox: m.lanes, RecordsIn: t.ctr.recordsIn.Load(), RecordsOut: t.ctr.recordsOut.Load()}
	replaying := false
	for i, c := range t.in.chans {
		in := InputDump{Input: i, Pending: len(c.pending), Replay: len(c.replay), Ended: c.eos}
		if c.barrier != nil {
			in.HeldBarrier = c.barrier.id
		}
		replaying = replaying || len(c.replay) > 0
		d.Inputs = append(d.Inputs, in)
	}
	for e, oe := range t.out.edges {
		for k, ch := range oe.channels {
			d.Outputs = append(d.Outputs, OutputDump{Edge: e, Channel: k, Credit: ch.credit, Outbox: len(ch.outbox), Ended: ch.eosSent})
		}
	}
	if t.aligner != nil {
		if id, ok := t.aligner.InProgress(); ok {
			d.Checkpoint = id
		}
	}
	switch {
	case t.phase.work == workFinished:
		d.Phase = PhaseFinished
	case t.phase.work == workFinishing:
		d.Phase = PhaseFinishing
	case t.phase.setup != setupRunning:
		d.Phase = PhaseNotStarted
	case t.phase.work == workIdle:
		d.Phase = PhaseSourceIdle
	case t.out.blocked > 0:
		d.Phase = PhaseBlocked
	case d.Checkpoint != 0 && t.ckpts[d.Checkpoint] == nil:
		d.Phase = PhaseAligning
	case d.Checkpoint != 0:
		d.Phase = PhaseCapturing
	case replaying:
		d.Phase = PhaseReplaying
	default:
		d.Phase = PhaseRunning
	}
	m.reply <- d
}

// dump answers a dumpChannelMsg.
func (c *channel) dump(m *dumpChannelMsg) {
	d := ChannelDump{Channel: c.name, Queued: len(c.queue), Unacked: len(c.unacked),
		Credit: c.job.opts.ChannelCapacity - c.occupancy(), Received: c.lastReceived, Delivered: c.lastDelivered,
		Blocked: c.blocked, EOS: c.eosSent, Mailbox: m.lanes}
	for _, b := range c.barriers {
		d.Barriers = append(d.Barriers, b.id)
	}
	m.reply <- d
}
