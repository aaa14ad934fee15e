package actors

import (
	"errors"
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/rescale"
	"github.com/weirstream/weir/rescale/flow"
	"github.com/weirstream/weir/store"
	"github.com/weirstream/weir/transport"
)

// wireBody is the msgpack payload of every runtime message that crosses
// nodes. K names the message; the other fields are those the message uses.
type wireBody struct {
	K         string              `msgpack:"k"`
	ID        uint64              `msgpack:"id,omitempty"`
	Op        int                 `msgpack:"op,omitempty"`
	Instance  int                 `msgpack:"instance,omitempty"`
	Gen       int                 `msgpack:"gen,omitempty"`
	Token     int                 `msgpack:"token,omitempty"`
	N         int                 `msgpack:"n,omitempty"`
	Output    int                 `msgpack:"output,omitempty"`
	Channel   int                 `msgpack:"channel,omitempty"`
	Seq       uint64              `msgpack:"seq,omitempty"`
	LastSeq   uint64              `msgpack:"last_seq,omitempty"`
	Final     bool                `msgpack:"final,omitempty"`
	Stop      bool                `msgpack:"stop,omitempty"`
	Unaligned bool                `msgpack:"unaligned,omitempty"`
	Reason    string              `msgpack:"reason,omitempty"`
	Refs      [][]WireRef         `msgpack:"refs,omitempty"`
	Ref       *WireRef            `msgpack:"ref,omitempty"`
	MarkKind  uint8               `msgpack:"mark,omitempty"`    // the watermark after the records (MarkKind)
	MarkAt    int64               `msgpack:"mark_at,omitempty"` // its time, Unix nanoseconds
	Records   msgpack.RawMessage  `msgpack:"records,omitempty"`
	Pending   []wireBuffer        `msgpack:"pending,omitempty"`
	Snap      *store.TaskSnapshot `msgpack:"snap,omitempty"`
	Alignment int64               `msgpack:"alignment,omitempty"`
	StateB    int64               `msgpack:"state_bytes,omitempty"`
	InflightB int64               `msgpack:"inflight_bytes,omitempty"`
	InflightR int64               `msgpack:"inflight_ref_bytes,omitempty"`
	Buffers   int64               `msgpack:"buffers,omitempty"`
	Manifest  *store.Manifest     `msgpack:"manifest,omitempty"`
	IDs       []uint64            `msgpack:"ids,omitempty"`
	Epoch     uint64              `msgpack:"epoch,omitempty"`   // the sending part's coordinator epoch (fencing)
	Run       int                 `msgpack:"run,omitempty"`     // the run of the job a job-level message belongs to
	Rescale   *wireRescale        `msgpack:"rescale,omitempty"` // a live rescale's fields
	Age       int64               `msgpack:"age,omitempty"`     // a data buffer's age when sent, ns (flow.AgeAt; 0: not known)
}

// wireBuffer is a buffer inside a barrier (the producer's pending ones).
type wireBuffer struct {
	Seq      uint64             `msgpack:"seq"`
	MarkKind uint8              `msgpack:"mark,omitempty"`
	MarkAt   int64              `msgpack:"mark_at,omitempty"`
	Records  msgpack.RawMessage `msgpack:"records"`
	Age      int64              `msgpack:"age,omitempty"` // its age when sent, ns (flow.AgeAt)
}

// Message kinds (wireBody.K).
const (
	kData       = "data"
	kEOS        = "eos"
	kBarrier    = "barrier"
	kCredit     = "credit"
	kChanWire   = "channel_wire"
	kWire       = "wire"
	kStart      = "start"
	kTrigger    = "trigger"
	kCkptDone   = "checkpoint_done"
	kCkptAbort  = "checkpoint_abort"
	kFinishSrc  = "finish_source"
	kEndInput   = "end_input"
	kPanic      = "chaos_panic"
	kReady      = "ready"
	kIdle       = "source_idle"
	kFinished   = "finished"
	kResumed    = "resumed"
	kCommitted  = "sink_committed"
	kAck        = "ack"
	kDecline    = "decline"
	kFailed     = "failed"
	kSpawn      = "spawn"
	kStopTask   = "stop_task"
	kStopActor  = "stop_actor"
	kTerminated = "terminated"
	kEnd        = "end"
	kPrune      = "prune"
)

// spawnTaskMsg asks a node's part of a job to start a task instance.
type spawnTaskMsg struct {
	priority
	op, instance, gen int
	token             int // the stand-in's incarnation, echoed in terminatedMsg
	run               int // the run of the job (jobCluster.run) that asks
	manifest          *store.Manifest
	coordinator       *actor.PID
	// rescale is the live rescale that adds this instance: it runs on the
	// plan after it (nil: the job's plan).
	rescale *rescale.Plan
}

// stopTaskMsg asks a node's part of a job to stop a task instance.
type stopTaskMsg struct {
	priority
	op, instance, token int
}

// stopActorMsg asks a node to stop one of its actors (chaos, from afar).
type stopActorMsg struct{ priority }

// remoteTerminatedMsg tells a task's stand-in that the task has ended.
type remoteTerminatedMsg struct {
	priority
	op, instance, token int
}

// endFragmentMsg tells a node's part of a job that the job is over. run
// names the run of the job that is over (0: this node's own agent asks, for
// whatever run the part belongs to).
type endFragmentMsg struct {
	priority
	reason string
	run    int
}

// linkFailedMsg tells an actor that a message to it was lost on the wire.
type linkFailedMsg struct {
	priority
	from   string
	reason string
}

// encodeRecords appends a buffer's records, encoded with the codec of edge,
// to dst.
func encodeRecords(j *Job, edge int, dst []byte, recs plan.Batch) (msgpack.RawMessage, error) {
	if edge < 0 || edge >= len(j.Plan.Edges) {
		return nil, fmt.Errorf("job %q has no edge %d", j.Plan.Name, edge)
	}
	return j.Plan.Edges[edge].Codec.AppendBatch(dst, recs)
}

// encodePending encodes the buffers a barrier carries with the codec of
// edge.
func encodePending(j *Job, edge int, pending []*Buffer) ([]wireBuffer, error) {
	var out []wireBuffer
	now := time.Now()
	for _, p := range pending {
		recs, err := encodeRecords(j, edge, nil, p.Records)
		if err != nil {
			return nil, err
		}
		out = append(out, wireBuffer{Seq: p.Seq, MarkKind: uint8(p.Mark.Kind), MarkAt: p.Mark.At, Records: recs, Age: flow.AgeAt(p.origin, now)})
	}
	return out, nil
}

// decodePending decodes the buffers a barrier carries with the codec of
// edge.
func decodePending(j *Job, edge int, pending []wireBuffer) ([]*Buffer, error) {
	var out []*Buffer
	now := time.Now()
	for _, p := range pending {
		recs, err := decodeRecords(j, edge, p.Records)
		if err != nil {
			return nil, err
		}
		mark, err := wireMark(p.MarkKind, p.MarkAt)
		if err != nil {
			return nil, err
		}
		out = append(out, &Buffer{Seq: p.Seq, Records: recs, Mark: mark, origin: flow.OriginOf(p.Age, now)})
	}
	return out, nil
}

// decodeRecords decodes a buffer's records with the codec of edge.
func decodeRecords(j *Job, edge int, data []byte) (plan.Batch, error) {
	if edge < 0 || edge >= len(j.Plan.Edges) {
		return nil, fmt.Errorf("job %q has no edge %d", j.Plan.Name, edge)
	}
	return j.Plan.Edges[edge].Codec.DecodeBatch(data)
}

// errNotRemote marks a message that never crosses nodes.
var errNotRemote = errors.New("message does not cross nodes")

// encode turns a message for target into an envelope type and a body. A
// data message's records are encoded into buf's scratch space when buf is
// not nil (the body is then valid until buf's next use).
func (r *Remote) encode(j *Job, target WireRef, m any, buf *sendBuf) (string, *wireBody, error) {
	switch m := m.(type) {
	case *dataMsg:
		var dst []byte
		if buf != nil {
			dst = buf.records[:0]
		}
		recs, err := encodeRecords(j, target.Edge, dst, m.buf.Records)
		if err != nil {
			return "", nil, err
		}
		if buf != nil {
			buf.records = recs
			// Encoding a data message is the batch's last use on this node:
			// its producer's outbox has let go of it, and a barrier that
			// carried it as pending data was encoded before it. The
			// producer may fill it again.
			if recycle := j.Plan.Edges[target.Edge].Recycle; recycle != nil {
				recycle(m.buf.Records)
			}
		}
		return transport.TypeBuffer, &wireBody{K: kData, Seq: m.buf.Seq, MarkKind: uint8(m.buf.Mark.Kind), MarkAt: m.buf.Mark.At, Records: recs,
			Age: flow.AgeAt(m.buf.origin, time.Now())}, nil
	case *eosMsg:
		return transport.TypeEOS, &wireBody{K: kEOS, LastSeq: m.lastSeq}, nil
	case *barrierMsg:
		pending, err := encodePending(j, target.Edge, m.pending)
		if err != nil {
			return "", nil, err
		}
		return transport.TypeBarrier, &wireBody{K: kBarrier, ID: m.id, LastSeq: m.lastSeq, Unaligned: m.unaligned, Final: m.final, Pending: pending}, nil
	case *creditMsg:
		return transport.TypeCredit, &wireBody{K: kCredit, N: m.n, Output: m.output, Channel: m.channel}, nil
	case *channelWireMsg:
		ref := r.refOf(m.producer)
		return transport.TypeControl, &wireBody{K: kChanWire, Ref: &ref, Output: m.output, Channel: m.channel}, nil
	case *wireMsg:
		b := &wireBody{K: kWire}
		for _, row := range m.outputs {
			refs := make([]WireRef, len(row))
			for i, pid := range row {
				refs[i] = r.refOf(pid)
			}
			b.Refs = append(b.Refs, refs)
		}
		return transport.TypeControl, b, nil
	case *startMsg:
		return transport.TypeControl, &wireBody{K: kStart}, nil
	case *triggerMsg:
		return transport.TypeControl, &wireBody{K: kTrigger, ID: m.id, Final: m.final, Stop: m.stop}, nil
	case *checkpointDoneMsg:
		return transport.TypeControl, &wireBody{K: kCkptDone, ID: m.id}, nil
	case *checkpointAbortMsg:
		return transport.TypeControl, &wireBody{K: kCkptAbort, ID: m.id}, nil
	case *finishSourceMsg:
		return transport.TypeControl, &wireBody{K: kFinishSrc}, nil
	case *endInputMsg:
		return transport.TypeControl, &wireBody{K: kEndInput}, nil
	case *chaosPanicMsg:
		return transport.TypeControl, &wireBody{K: kPanic}, nil
	case *taskReadyMsg:
		refs := make([]WireRef, len(m.inputs))
		for i, pid := range m.inputs {
			refs[i] = r.refOf(pid)
		}
		return transport.TypeControl, &wireBody{K: kReady, Op: m.op, Instance: m.instance, Gen: m.gen, Refs: [][]WireRef{refs}}, nil
	case *sourceIdleMsg:
		return transport.TypeControl, &wireBody{K: kIdle, Op: m.op, Instance: m.instance, Gen: m.gen}, nil
	case *taskFinishedMsg:
		return transport.TypeControl, &wireBody{K: kFinished, Op: m.op, Instance: m.instance, Gen: m.gen}, nil
	case *taskResumedMsg:
		return transport.TypeControl, &wireBody{K: kResumed, Op: m.op, Instance: m.instance, Gen: m.gen}, nil
	case *sinkCommittedMsg:
		return transport.TypeControl, &wireBody{K: kCommitted, Op: m.op, Instance: m.instance, Gen: m.gen, ID: m.id}, nil
	case *taskAckMsg:
		snap := m.snap
		return transport.TypeControl, &wireBody{K: kAck, ID: m.id, Op: m.op, Instance: m.instance, Snap: &snap,
			Alignment: int64(m.alignment), Unaligned: m.unaligned, StateB: m.stateB, InflightB: m.inflightB, InflightR: m.inflightRefB, Buffers: m.buffers}, nil
	case *taskDeclineMsg:
		return transport.TypeControl, &wireBody{K: kDecline, ID: m.id, Op: m.op, Instance: m.instance, Reason: m.reason}, nil
	case *taskFailedMsg:
		ref := r.refOf(m.who)
		reason := fmt.Sprint(m.reason)
		var te *TaskError
		if err, ok := m.reason.(error); ok && errors.As(err, &te) {
			reason = te.Err.Error() // the coordinator names the task again
		}
		return transport.TypeControl, &wireBody{K: kFailed, Ref: &ref, Reason: reason}, nil
	case *spawnTaskMsg:
		ref := r.refOf(m.coordinator)
		b := &wireBody{K: kSpawn, Op: m.op, Instance: m.instance, Gen: m.gen, Token: m.token,
			Run: m.run, Manifest: m.manifest, Ref: &ref}
		if m.rescale != nil {
			enc, err := m.rescale.Encode()
			if err != nil {
				return "", nil, err
			}
			b.Rescale = &wireRescale{Plan: enc}
		}
		return transport.TypeControl, b, nil
	case *stopTaskMsg:
		return transport.TypeControl, &wireBody{K: kStopTask, Op: m.op, Instance: m.instance, Token: m.token}, nil
	case *stopActorMsg:
		return transport.TypeControl, &wireBody{K: kStopActor}, nil
	case *remoteTerminatedMsg:
		return transport.TypeControl, &wireBody{K: kTerminated, Op: m.op, Instance: m.instance, Token: m.token}, nil
	case *endFragmentMsg:
		if m.run == 0 {
			return "", nil, errors.New("end of a job without its run: only the node's own agent ends any run")
		}
		return transport.TypeControl, &wireBody{K: kEnd, Reason: m.reason, Run: m.run}, nil
	case *pruneMsg:
		return transport.TypeControl, &wireBody{K: kPrune, IDs: m.ids, Run: m.run}, nil
	}
	return r.encodeRescale(j, target, m)
}

// decode turns a received body for the local actor to back into a message.
// to is the receiving actor's own ref (its edge, for records).
func (r *Remote) decode(j *Job, to WireRef, b *wireBody) (any, error) {
	switch b.K {
	case kData:
		recs, err := decodeRecords(j, to.Edge, b.Records)
		if err != nil {
			return nil, err
		}
		mark, err := wireMark(b.MarkKind, b.MarkAt)
		if err != nil {
			return nil, err
		}
		return &dataMsg{buf: &Buffer{Seq: b.Seq, Records: recs, Mark: mark, origin: flow.OriginOf(b.Age, time.Now())}}, nil
	case kEOS:
		return &eosMsg{lastSeq: b.LastSeq}, nil
	case kBarrier:
		pending, err := decodePending(j, to.Edge, b.Pending)
		if err != nil {
			return nil, err
		}
		return &barrierMsg{id: b.ID, lastSeq: b.LastSeq, unaligned: b.Unaligned, final: b.Final, pending: pending}, nil
	case kCredit:
		return &creditMsg{n: b.N, output: b.Output, channel: b.Channel}, nil
	case kChanWire:
		if b.Ref == nil {
			return nil, errors.New("channel wiring without a producer")
		}
		return &channelWireMsg{producer: r.resolve(j, *b.Ref), output: b.Output, channel: b.Channel}, nil
	case kWire:
		m := &wireMsg{}
		for _, row := range b.Refs {
			pids := make([]*actor.PID, len(row))
			for i, ref := range row {
				pids[i] = r.resolve(j, ref)
			}
			m.outputs = append(m.outputs, pids)
		}
		return m, nil
	case kStart:
		return &startMsg{}, nil
	case kTrigger:
		return &triggerMsg{id: b.ID, final: b.Final, stop: b.Stop}, nil
	case kCkptDone:
		return &checkpointDoneMsg{id: b.ID}, nil
	case kCkptAbort:
		return &checkpointAbortMsg{id: b.ID}, nil
	case kFinishSrc:
		return &finishSourceMsg{}, nil
	case kEndInput:
		return &endInputMsg{}, nil
	case kPanic:
		return &chaosPanicMsg{}, nil
	case kReady:
		m := &taskReadyMsg{op: b.Op, instance: b.Instance, gen: b.Gen}
		if len(b.Refs) == 1 {
			for _, ref := range b.Refs[0] {
				m.inputs = append(m.inputs, r.resolve(j, ref))
			}
		}
		return m, nil
	case kIdle:
		return &sourceIdleMsg{op: b.Op, instance: b.Instance, gen: b.Gen}, nil
	case kFinished:
		return &taskFinishedMsg{op: b.Op, instance: b.Instance, gen: b.Gen}, nil
	case kResumed:
		return &taskResumedMsg{op: b.Op, instance: b.Instance, gen: b.Gen}, nil
	case kCommitted:
		return &sinkCommittedMsg{op: b.Op, instance: b.Instance, gen: b.Gen, id: b.ID}, nil
	case kAck:
		if b.Snap == nil {
			return nil, errors.New("acknowledgement without a snapshot")
		}
		return &taskAckMsg{id: b.ID, op: b.Op, instance: b.Instance, snap: *b.Snap, alignment: time.Duration(b.Alignment),
			unaligned: b.Unaligned, stateB: b.StateB, inflightB: b.InflightB, inflightRefB: b.InflightR, buffers: b.Buffers}, nil
	case kDecline:
		return &taskDeclineMsg{id: b.ID, op: b.Op, instance: b.Instance, reason: b.Reason}, nil
	case kFailed:
		if b.Ref == nil {
			return nil, errors.New("failure report without a task")
		}
		return &taskFailedMsg{who: r.resolve(j, *b.Ref), reason: errors.New(b.Reason)}, nil
	case kSpawn:
		if b.Ref == nil {
			return nil, errors.New("spawn request without a coordinator")
		}
		m := &spawnTaskMsg{op: b.Op, instance: b.Instance, gen: b.Gen, token: b.Token, run: b.Run, manifest: b.Manifest,
			coordinator: r.resolve(j, *b.Ref)}
		if b.Rescale != nil {
			p, err := rescale.DecodePlan(b.Rescale.Plan)
			if err != nil {
				return nil, fmt.Errorf("spawn request: %w", err)
			}
			m.rescale = p
		}
		return m, nil
	case kStopTask:
		return &stopTaskMsg{op: b.Op, instance: b.Instance, token: b.Token}, nil
	case kStopActor:
		return &stopActorMsg{}, nil
	case kTerminated:
		return &remoteTerminatedMsg{op: b.Op, instance: b.Instance, token: b.Token}, nil
	case kEnd:
		// From another node, an end always names its run: one without
		// would end whatever run of the job the part here belongs to.
		if b.Run == 0 {
			return nil, errors.New("end of a job without its run")
		}
		return &endFragmentMsg{reason: b.Reason, run: b.Run}, nil
	case kPrune:
		return &pruneMsg{ids: b.IDs, run: b.Run}, nil
	}
	if m, ok, err := r.decodeRescale(j, to, b); ok {
		return m, err
	}
	return nil, fmt.Errorf("unknown message kind %q: %w", b.K, transport.ErrUnknownType)
}
