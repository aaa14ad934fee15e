package actors

import (
	"errors"
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/weirstream/weir/actors/mailbox"
	"github.com/weirstream/weir/transport"
)

// refCoordinator is the kind of a job's coordinator ref: messages to it go on
// the job's coordinator subject.
const refCoordinator = "coordinator"

// proxy stands in on this node for an actor on another node: what it receives
// it publishes on the target's subject, in order, with a per-link sequence
// number. A task's stand-in (spawn != nil) is the coordinator's child: it asks
// the target node to start the task, and stops only when that node reports
// the task ended (or the node is lost), so a restart never overlaps the old
// incarnation.
type proxy struct {
	r      *Remote
	owner  *Job // the run of the job this stand-in speaks for
	job    string
	target WireRef
	gen    int
	from   string
	spawn  *spawnTaskMsg
	quiet  bool // stopping without telling the target (it is gone or the job is over)
	buf    *sendBuf
	// stopWait fires when the target's node has not confirmed a stop in
	// remoteStopWait.
	stopWait *time.Timer
}

// remoteStopWait bounds the wait of a task's stand-in for its node to
// confirm the task stopped. A lost node is never waited for; this bounds
// the rest (the request or its answer lost on the wire): the stand-in then
// stops, and the restart goes on without the confirmation (the restarted
// task carries a new incarnation token, so the old one cannot take part).
// (A variable for tests only.)
var remoteStopWait = 10 * time.Second

// stopWaitMsg is the end of a stand-in's wait for a stop confirmation.
type stopWaitMsg struct{ priority }

// stopRemoteMsg asks a task stand-in to stop its task and end once it has.
type stopRemoteMsg struct{ priority }

// quietStopMsg stops a stand-in without telling its target.
type quietStopMsg struct{ priority }

// newProxy makes a stand-in for target that speaks for job j: what it sends
// carries j's coordinator epoch, whichever run of the job is registered here
// by then.
func newProxy(r *Remote, j *Job, target WireRef, spawn *spawnTaskMsg) *proxy {
	return &proxy{r: r, owner: j, job: j.Plan.Name, target: target, gen: stamp(), spawn: spawn}
}

// proxyProps spawns p. Its mailbox keeps every message in the order posted
// (a barrier must not overtake the data ahead of it on its way to the remote
// channel) and holds what a sender with a stale PID posts while a stand-in is
// respawned under its old name until the new one has started.
func proxyProps(p *proxy) *actor.Props {
	return actor.PropsFromProducer(func() actor.Actor { return p }, actor.WithMailbox(mailbox.New(mailbox.InOrder())))
}

// Receive forwards messages to the target.
func (p *proxy) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		p.from = p.r.node + "/" + ctx.Self().Id
		if p.spawn != nil {
			p.r.addProxy(p.owner, p.target, ctx.Self())
			p.spawn.coordinator = ctx.Parent()
			p.send(p.fragment(), p.spawn)
		}
	case *actor.Stopping:
		if _, ok := p.r.job(p.job); p.quiet || !ok {
			return // told to be quiet, or the job is over here
		}
		// Also when the target's node was declared lost: if it was only
		// slow, this stops the task it still runs (no zombie incarnation).
		if p.spawn != nil {
			p.send(p.fragment(), &stopTaskMsg{op: p.spawn.op, instance: p.spawn.instance, token: p.spawn.token})
		} else {
			p.send(p.target, &stopActorMsg{})
		}
	case *actor.Stopped:
		if p.stopWait != nil {
			p.stopWait.Stop()
		}
		p.r.dropProxy(p.target, ctx.Self())
	case *actor.Restarting, *actor.Terminated:
	case *flushTickMsg:
		// The target's node ticks its own tasks.
	case *stopRemoteMsg:
		if p.spawn == nil || p.r.isLost(p.target.Node) {
			// Not a task's stand-in, or do not wait for a lost node;
			// Stopping still asks the target, in case it was only slow.
			ctx.Stop(ctx.Self())
			return
		}
		p.r.log.Debug().Str("job", p.job).Str("peer", p.target.Node).Str("task", p.target.ID).Msg("asking the task's node to stop it")
		p.send(p.fragment(), &stopTaskMsg{op: p.spawn.op, instance: p.spawn.instance, token: p.spawn.token})
		if p.stopWait == nil {
			root, self := ctx.ActorSystem().Root, ctx.Self()
			p.stopWait = time.AfterFunc(remoteStopWait, func() { root.Send(self, &stopWaitMsg{}) })
		}
	case *stopWaitMsg:
		p.r.log.Warn().Str("job", p.job).Str("peer", p.target.Node).Str("task", p.target.ID).
			Dur("waited", remoteStopWait).Msg("the task's node did not confirm its stop: restarting without the confirmation")
		ctx.Stop(ctx.Self())
	case *quietStopMsg:
		p.quiet = true
		ctx.Stop(ctx.Self())
	case *remoteTerminatedMsg:
		if p.spawn == nil {
			p.send(p.target, m) // a fragment's report, for the coordinator
			return
		}
		if m.token == p.spawn.token {
			p.quiet = true
			ctx.Stop(ctx.Self())
			return
		}
		p.r.log.Debug().Str("job", p.job).Str("task", p.target.ID).Msg("end of an earlier incarnation reported: ignored")
	default:
		p.send(p.target, m)
	}
}

// fragment is the ref of the job's part on the target's node.
func (p *proxy) fragment() WireRef {
	return WireRef{Node: p.target.Node, ID: "node/job-" + p.job, Kind: refJob}
}

// send publishes m for to. A message that cannot be sent is logged; the
// receiver's sequence check turns the gap into a failure and a recovery.
func (p *proxy) send(to WireRef, m any) {
	if p.buf == nil {
		p.buf = newSendBuf()
	}
	if err := p.r.send(p.owner, p.from, p.gen, to, m, p.buf); err != nil {
		p.r.log.Error().Err(err).Str("job", p.job).Str("to", to.Node+"/"+to.ID).Msg("send to remote actor")
	}
}

// send encodes m, sent by an actor of job j, for the actor to and publishes
// it on its subject, stamped with j's coordinator epoch: the sender's own,
// not that of a later run of the same name registered here meanwhile, so
// the receivers' fences refuse what a replaced run still sends. A sender
// that sends often passes its own buf, reused for every message; nil
// allocates.
func (r *Remote) send(j *Job, from string, gen int, to WireRef, m any, buf *sendBuf) error {
	job := j.Plan.Name
	if _, ok := r.job(job); !ok {
		return fmt.Errorf("job %q has no part on node %s", job, r.node)
	}
	typ, body, err := r.encode(j, to, m, buf)
	if errors.Is(err, errNotRemote) {
		r.log.Debug().Str("msg_type", fmt.Sprintf("%T", m)).Msg("local-only message for a remote actor: dropped")
		return nil
	}
	if err != nil {
		return fmt.Errorf("encode %T: %w", m, err)
	}
	if c := j.opts.Cluster; c != nil {
		body.Epoch = c.Epoch
	}
	payload, err := buf.marshal(body)
	if err != nil {
		return fmt.Errorf("encode %s: %w", body.K, err)
	}
	subject, err := r.subjectFor(j, to, m)
	if err != nil {
		return err
	}
	// One link per subject: NATS keeps order per subject, and each
	// subscription is delivered on its own goroutine. A stand-in sends
	// credit for several channels (consumers of one producer placed on one
	// node), each on its own subject, so the link names the channel too.
	if s, err := transport.ParseSubject(subject); err == nil {
		from += "#" + s.Kind
		if s.Kind == transport.KindCredit {
			from += fmt.Sprintf(".%d.%d.%d", s.Edge, s.From, s.To)
		}
	}
	e := &transport.Envelope{Type: typ, Job: job, From: from, To: to.ID, Gen: r.linkGen(to.Node, gen), Checkpoint: checkpointOf(m), Payload: payload}
	if err := r.publish(subject, to.Node, e); err != nil {
		return fmt.Errorf("publish %s: %w", body.K, err)
	}
	return nil
}

// subjectFor picks the subject a message to ref travels on.
func (r *Remote) subjectFor(j *Job, to WireRef, m any) (string, error) {
	name := j.Plan.Name
	switch to.Kind {
	case refChannel:
		switch m.(type) {
		case *dataMsg, *eosMsg, *barrierMsg, *rescaleBarrierMsg:
			return transport.DataSubject(name, to.Edge, to.From, to.To), nil
		}
	case refTask:
		if c, ok := m.(*creditMsg); ok {
			if to.Op < 0 || to.Op >= len(j.Plan.Operators) || c.output >= len(j.Plan.Operators[to.Op].Outputs) {
				return "", fmt.Errorf("credit for unknown output %d of operator %d", c.output, to.Op)
			}
			edge := j.Plan.Operators[to.Op].Outputs[c.output].ID
			return transport.CreditSubject(name, edge, to.Instance, c.channel), nil
		}
	case refCoordinator:
		return transport.CoordinatorSubject(name), nil
	}
	return transport.ControlSubject(name, to.Node), nil
}

// checkpointOf is the checkpoint id a message belongs to (header), 0 if none.
func checkpointOf(m any) uint64 {
	switch m := m.(type) {
	case *barrierMsg:
		return m.id
	case *triggerMsg:
		return m.id
	case *taskAckMsg:
		return m.id
	case *taskDeclineMsg:
		return m.id
	case *checkpointDoneMsg:
		return m.id
	case *checkpointAbortMsg:
		return m.id
	case *spawnTaskMsg:
		if m.manifest != nil {
			return m.manifest.CheckpointID
		}
	}
	return 0
}
