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
	"github.com/weirstream/weir/transport"
)

// Message kinds of a live rescale on a cluster (wireBody.K).
const (
	kRsAddInputs   = "rescale_add_inputs"
	kRsInputsAdded = "rescale_inputs_added"
	kRsBegin       = "rescale_begin"
	kRsInject      = "rescale_inject"
	kRsFence       = "rescale_fence"
	kRsEnd         = "rescale_end"
	kRsDrained     = "rescale_drained"
	kRsTaskDone    = "rescale_task_done"
	kRsBarrier     = "rescale_barrier"
	kRsHandoff     = "rescale_handoff"
	kRsCommitPart  = "rescale_commit_part"
	kRsBegun       = "rescale_begun"
	kRsStaged      = "rescale_staged"
)

// wireRescale is the rescale part of a wireBody: the fields the rescale
// messages use beyond the common ones.
type wireRescale struct {
	Seq       uint64              `msgpack:"seq,omitempty"`
	Edge      int                 `msgpack:"edge,omitempty"`
	Input     int                 `msgpack:"input,omitempty"`
	From      int                 `msgpack:"from,omitempty"`
	Producers []int               `msgpack:"producers,omitempty"`
	Retired   []int               `msgpack:"retired,omitempty"`
	Groups    []int               `msgpack:"groups,omitempty"`
	Peers     []WireRef           `msgpack:"peers,omitempty"`
	Config    *rescale.TaskConfig `msgpack:"config,omitempty"`
	Plan      []byte              `msgpack:"plan,omitempty"` // rescale.Plan.Encode
	Result    rescale.TaskResult  `msgpack:"result,omitempty"`
	Blobs     map[int][]byte      `msgpack:"blobs,omitempty"`
	Records   map[int][]wireHeld  `msgpack:"records,omitempty"`
	Bytes     int64               `msgpack:"bytes,omitempty"`
	// Staged is a removed sink instance's staged output (rescaleStagedMsg).
	Staged []byte `msgpack:"staged,omitempty"`
}

// wireHeld is records of one input edge (index among the operator's
// inputs) set aside for a handoff.
type wireHeld struct {
	Edge    int                `msgpack:"edge"`
	Records msgpack.RawMessage `msgpack:"records"`
	// At is when the records were delivered to the old owner (Unix ns;
	// 0: not known).
	At int64 `msgpack:"at,omitempty"`
	// Age is the records' buffer's age when sent, ns (flow.AgeAt; 0: not
	// known).
	Age int64 `msgpack:"age,omitempty"`
}

// rescaleCommitPartMsg tells a node's part of a job that a live rescale
// committed: its plan becomes the part's, so the tasks it starts from now
// on (restarts) run at the new parallelisms.
type rescaleCommitPartMsg struct {
	priority
	plan *rescale.Plan
	run  int
}

// encodeRescale encodes the live-rescale messages; errNotRemote for others.
func (r *Remote) encodeRescale(j *Job, target WireRef, m any) (string, *wireBody, error) {
	refs := func(pids []*actor.PID) []WireRef {
		out := make([]WireRef, len(pids))
		for i, pid := range pids {
			out[i] = r.refOf(pid)
		}
		return out
	}
	switch m := m.(type) {
	case *rescaleAddInputsMsg:
		return transport.TypeControl, &wireBody{K: kRsAddInputs, Rescale: &wireRescale{Seq: m.seq, Edge: m.edge, Producers: m.producers}}, nil
	case *rescaleInputsAddedMsg:
		return transport.TypeControl, &wireBody{K: kRsInputsAdded, Op: m.op, Instance: m.instance, Refs: [][]WireRef{refs(m.pids)},
			Rescale: &wireRescale{Seq: m.seq, Edge: m.edge, Producers: m.producers}}, nil
	case *rescaleBeginMsg:
		if m.plan == nil {
			return "", nil, errors.New("rescale begin without its plan")
		}
		enc, err := m.plan.Encode()
		if err != nil {
			return "", nil, err
		}
		cfg := m.cfg
		b := &wireBody{K: kRsBegin, Rescale: &wireRescale{Config: &cfg, Plan: enc, Peers: refs(m.peers)}}
		for _, row := range m.outputs {
			b.Refs = append(b.Refs, refs(row))
		}
		b.Final = m.outputs != nil // outputs given (possibly none)
		b.Stop = m.ack
		return transport.TypeControl, b, nil
	case *rescaleInjectMsg:
		return transport.TypeControl, &wireBody{K: kRsInject}, nil
	case *rescaleBegunMsg:
		return transport.TypeControl, &wireBody{K: kRsBegun, Op: m.op, Instance: m.instance, Rescale: &wireRescale{Seq: m.seq}}, nil
	case *rescaleFenceMsg:
		return transport.TypeControl, &wireBody{K: kRsFence, Rescale: &wireRescale{From: m.from}}, nil
	case *rescaleEndMsg:
		return transport.TypeControl, &wireBody{K: kRsEnd, Rescale: &wireRescale{Retired: m.retired}}, nil
	case *rescaleDrainedMsg:
		return transport.TypeControl, &wireBody{K: kRsDrained, Op: m.op, Instance: m.instance, Rescale: &wireRescale{Seq: m.seq, Input: m.input}}, nil
	case *rescaleTaskDoneMsg:
		return transport.TypeControl, &wireBody{K: kRsTaskDone, Op: m.op, Instance: m.instance, Rescale: &wireRescale{Seq: m.seq, Result: m.result}}, nil
	case *rescaleBarrierMsg:
		pending, err := encodePending(j, target.Edge, m.pending)
		if err != nil {
			return "", nil, err
		}
		b := &wireBody{K: kRsBarrier, LastSeq: m.lastSeq, Pending: pending}
		// A control message (a barrier's type needs a checkpoint id) on
		// the channel's data subject, in order with its data.
		return transport.TypeControl, b, nil
	case *rescaleHandoffMsg:
		op, err := operatorOf(j, target.Op)
		if err != nil {
			return "", nil, err
		}
		w := &wireRescale{From: m.from, Groups: m.groups, Blobs: m.blobs, Bytes: m.bytes, Records: map[int][]wireHeld{}}
		now := time.Now()
		for g, hbs := range m.records {
			for _, hb := range hbs {
				if hb.edge < 0 || hb.edge >= len(op.Inputs) {
					return "", nil, fmt.Errorf("handoff records of input %d, operator %s has %d", hb.edge, op.Name, len(op.Inputs))
				}
				recs, err := encodeRecords(j, op.Inputs[hb.edge].ID, nil, hb.recs)
				if err != nil {
					return "", nil, err
				}
				w.Records[g] = append(w.Records[g], wireHeld{Edge: hb.edge, Records: recs, At: unixNanoOf(hb.at), Age: flow.AgeAt(hb.origin, now)})
			}
		}
		return transport.TypeControl, &wireBody{K: kRsHandoff, Rescale: w}, nil
	case *rescaleStagedMsg:
		return transport.TypeControl, &wireBody{K: kRsStaged, Rescale: &wireRescale{From: m.from, Staged: m.state}}, nil
	case *rescaleCommitPartMsg:
		enc, err := m.plan.Encode()
		if err != nil {
			return "", nil, err
		}
		return transport.TypeControl, &wireBody{K: kRsCommitPart, Run: m.run, Rescale: &wireRescale{Plan: enc}}, nil
	}
	return "", nil, fmt.Errorf("%T: %w", m, errNotRemote)
}

// operatorOf is operator op of j's plan, or an error for a bad index.
func operatorOf(j *Job, op int) (*plan.Operator, error) {
	if op < 0 || op >= len(j.Plan.Operators) {
		return nil, fmt.Errorf("job %q has no operator %d", j.Plan.Name, op)
	}
	return j.Plan.Operators[op], nil
}

// decodeRescale decodes the live-rescale messages; ok is false for a kind
// that is not one.
func (r *Remote) decodeRescale(j *Job, to WireRef, b *wireBody) (m any, ok bool, err error) {
	w := b.Rescale
	switch b.K {
	case kRsAddInputs, kRsInputsAdded, kRsBegin, kRsBegun, kRsFence, kRsEnd, kRsDrained, kRsTaskDone, kRsHandoff, kRsCommitPart, kRsStaged:
		if w == nil {
			return nil, true, fmt.Errorf("%s without its rescale fields", b.K)
		}
	case kRsInject, kRsBarrier:
	default:
		return nil, false, nil
	}
	pids := func(refs []WireRef) []*actor.PID {
		out := make([]*actor.PID, len(refs))
		for i, ref := range refs {
			out[i] = r.resolve(j, ref)
		}
		return out
	}
	switch b.K {
	case kRsAddInputs:
		return &rescaleAddInputsMsg{seq: w.Seq, edge: w.Edge, producers: w.Producers}, true, nil
	case kRsInputsAdded:
		if len(b.Refs) != 1 || len(b.Refs[0]) != len(w.Producers) {
			return nil, true, errors.New("added inputs without one channel per producer")
		}
		return &rescaleInputsAddedMsg{seq: w.Seq, op: b.Op, instance: b.Instance, edge: w.Edge, producers: w.Producers, pids: pids(b.Refs[0])}, true, nil
	case kRsBegin:
		if w.Config == nil {
			return nil, true, errors.New("rescale begin without the task's part")
		}
		p, err := rescale.DecodePlan(w.Plan)
		if err != nil {
			return nil, true, err
		}
		next, err := nextOperator(j, p, to.Op)
		if err != nil {
			return nil, true, err
		}
		m := &rescaleBeginMsg{cfg: *w.Config, next: next, plan: p, peers: pids(w.Peers), ack: b.Stop}
		if b.Final {
			m.outputs = [][]*actor.PID{}
			for _, row := range b.Refs {
				m.outputs = append(m.outputs, pids(row))
			}
		}
		return m, true, nil
	case kRsInject:
		return &rescaleInjectMsg{}, true, nil
	case kRsBegun:
		return &rescaleBegunMsg{seq: w.Seq, op: b.Op, instance: b.Instance}, true, nil
	case kRsFence:
		return &rescaleFenceMsg{from: w.From}, true, nil
	case kRsStaged:
		return &rescaleStagedMsg{from: w.From, state: w.Staged}, true, nil
	case kRsEnd:
		return &rescaleEndMsg{retired: w.Retired}, true, nil
	case kRsDrained:
		return &rescaleDrainedMsg{seq: w.Seq, op: b.Op, instance: b.Instance, input: w.Input}, true, nil
	case kRsTaskDone:
		return &rescaleTaskDoneMsg{seq: w.Seq, op: b.Op, instance: b.Instance, result: w.Result}, true, nil
	case kRsBarrier:
		pending, err := decodePending(j, to.Edge, b.Pending)
		if err != nil {
			return nil, true, err
		}
		return &rescaleBarrierMsg{lastSeq: b.LastSeq, pending: pending}, true, nil
	case kRsHandoff:
		op, err := operatorOf(j, to.Op)
		if err != nil {
			return nil, true, err
		}
		m := &rescaleHandoffMsg{from: w.From, groups: w.Groups, blobs: w.Blobs, bytes: w.Bytes, records: map[int][]heldBatch{}}
		now := time.Now()
		for g, whs := range w.Records {
			for _, wh := range whs {
				if wh.Edge < 0 || wh.Edge >= len(op.Inputs) {
					return nil, true, fmt.Errorf("handoff records of input %d, operator %s has %d", wh.Edge, op.Name, len(op.Inputs))
				}
				recs, err := decodeRecords(j, op.Inputs[wh.Edge].ID, wh.Records)
				if err != nil {
					return nil, true, err
				}
				m.records[g] = append(m.records[g], heldBatch{edge: wh.Edge, recs: recs, at: timeOfUnixNano(wh.At), origin: flow.OriginOf(wh.Age, now)})
			}
		}
		return m, true, nil
	case kRsCommitPart:
		p, err := rescale.DecodePlan(w.Plan)
		if err != nil {
			return nil, true, err
		}
		return &rescaleCommitPartMsg{plan: p, run: b.Run}, true, nil
	}
	return nil, false, nil
}

// nextOperator is operator op of j's plan after rescale p (see planAfter).
func nextOperator(j *Job, p *rescale.Plan, op int) (*plan.Operator, error) {
	next, err := j.planAfter(p)
	if err != nil {
		return nil, err
	}
	if op < 0 || op >= len(next.Operators) {
		return nil, fmt.Errorf("job %q has no operator %d", j.Plan.Name, op)
	}
	return next.Operators[op], nil
}

// planAfter is planAfter of the job's plan, read under the job's lock (a
// part takes a committed rescale's plan under it).
func (j *Job) planAfter(p *rescale.Plan) (*plan.Job, error) {
	j.mu.Lock()
	cur := clonePlan(j.Plan)
	j.mu.Unlock()
	return planAfter(cur, p)
}

// planAfter is a copy of cur shaped as rescale p leaves it: the operators
// at the parallelisms and tables of p's topology (the job as its
// coordinator ran it when p was planned, which a node's own copy may not
// show yet), then p applied.
func planAfter(cur *plan.Job, p *rescale.Plan) (*plan.Job, error) {
	next := clonePlan(cur)
	if err := shapeAs(next, p.Input.Topology); err != nil {
		return nil, fmt.Errorf("rescale %d: %w", p.Input.Seq, err)
	}
	if err := p.Apply(next); err != nil {
		return nil, err
	}
	return next, nil
}

// shapeAs gives j's operators the parallelisms and tables of t, and its
// implicit edges the partitioners they choose from them.
func shapeAs(j *plan.Job, t rescale.Topology) error {
	if len(t.Operators) != len(j.Operators) {
		return fmt.Errorf("topology of %d operators, job %q has %d", len(t.Operators), j.Name, len(j.Operators))
	}
	for i, o := range t.Operators {
		op := j.Operators[i]
		if op.Name != o.Name {
			return fmt.Errorf("topology operator %d is %q, job %q has %q", i, o.Name, j.Name, op.Name)
		}
		if o.Parallelism < 1 {
			return fmt.Errorf("topology gives operator %q parallelism %d", o.Name, o.Parallelism)
		}
		op.Parallelism = o.Parallelism
		if o.Table != nil {
			op.Table = o.Table.Clone()
		}
	}
	for _, e := range j.Edges {
		if e.Implicit {
			e.Partitioner = plan.ImplicitPartitioner(e.From.Parallelism, e.To.Parallelism)
		}
	}
	return nil
}
