package actors

import (
	"fmt"

	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/keygroups"
	"github.com/weirstream/weir/store"
)

// RestorePlan is how a checkpoint's operators map onto the plan restoring it:
// each operator's parallelism and key-group table after the restore.
type RestorePlan struct {
	// Operators is one entry per plan operator, in plan order.
	Operators []OperatorRestore
}

// OperatorRestore is one operator of a RestorePlan.
type OperatorRestore struct {
	Name string
	// From is the operator's parallelism in the checkpoint, To after the
	// restore. A source that is not Splittable keeps From (Pinned when the
	// plan asked for another).
	From, To int
	// Pinned is true for a source without splits that the plan asked to run
	// at another parallelism: its offsets are per instance, so it resumes at
	// the checkpoint's parallelism. A Splittable source is never pinned: its
	// splits are dealt to the new instances (AssignSplits).
	Pinned bool
	// Table is the operator's key-group table after the restore (nil for an
	// operator that needs none): the manifest's own at the same parallelism,
	// the manifest's rescaled to To otherwise.
	Table *keygroups.Table
	// Moved is how many key groups change owner; Minimum the fewest any
	// balanced table for To instances could move.
	Moved, Minimum int
}

// Rescaled reports whether the operator runs at another parallelism than in
// the checkpoint.
func (o OperatorRestore) Rescaled() bool { return o.From != o.To }

// PlanRestore decides how manifest m is restored into plan p, without
// changing p: a source keeps the checkpoint's parallelism unless it is
// Splittable (its splits then move to the new instances); an operator with a
// key-group table takes the manifest's table, rescaled (keygroups.Rebalance:
// fewest groups moved) when its parallelism changes; a stateless operator
// may change parallelism freely, and an edge whose partitioner the graph
// chose from the parallelisms is chosen again. It refuses, saying exactly what differs,
// another job or graph, another maxParallelism, an operator with non-keyed
// state at another parallelism, and a forward edge whose two ends end up at
// different parallelisms (a pinned source feeding a rescaled consumer).
func PlanRestore(p *plan.Job, m *store.Manifest) (RestorePlan, error) {
	if m.Job != p.Name {
		return RestorePlan{}, fmt.Errorf("checkpoint %d belongs to job %q, not %q", m.CheckpointID, m.Job, p.Name)
	}
	if fp := p.FingerprintAt(m.Parallelism); m.Fingerprint != fp {
		return RestorePlan{}, fmt.Errorf("checkpoint %d was taken from a different graph (fingerprint %s, this graph %s)", m.CheckpointID, m.Fingerprint, fp)
	}
	if m.MaxParallelism != p.MaxParallelism {
		return RestorePlan{}, fmt.Errorf("checkpoint %d has maxParallelism %d, the job %d: key groups cannot be split or merged, so a checkpoint restores only at its own maxParallelism",
			m.CheckpointID, m.MaxParallelism, p.MaxParallelism)
	}
	rp := RestorePlan{Operators: make([]OperatorRestore, len(p.Operators))}
	to := map[string]int{}
	for i, op := range p.Operators {
		o, err := planOperator(p, m, op)
		if err != nil {
			return RestorePlan{}, fmt.Errorf("checkpoint %d, operator %q: %w", m.CheckpointID, op.Name, err)
		}
		rp.Operators[i] = o
		to[op.Name] = o.To
	}
	for _, e := range p.Edges {
		if !e.Implicit && e.Partitioner == plan.Forward && to[e.From.Name] != to[e.To.Name] {
			return RestorePlan{}, fmt.Errorf("checkpoint %d: edge %s → %s is forward, and %q resumes at parallelism %d (a source without splits keeps the checkpoint's) while %q runs at %d",
				m.CheckpointID, e.From.Name, e.To.Name, e.From.Name, to[e.From.Name], e.To.Name, to[e.To.Name])
		}
	}
	return rp, nil
}

// planOperator is PlanRestore for one operator.
func planOperator(p *plan.Job, m *store.Manifest, op *plan.Operator) (OperatorRestore, error) {
	from, ok := m.Parallelism[op.Name]
	if !ok || from < 1 {
		return OperatorRestore{}, fmt.Errorf("the checkpoint has no parallelism for it")
	}
	o := OperatorRestore{Name: op.Name, From: from, To: op.Parallelism}
	if op.Kind == plan.KindSource && !op.Splittable && o.To != from {
		o.To, o.Pinned = from, true
	}
	// A sink's operator state is its instance's own uncommitted output
	// (two-phase): at a higher parallelism each instance recovers its own and
	// the added ones start with none; at a lower one, a sink that hands its
	// staged output off has each removed instance's recovered by a remaining
	// one (removedStaged), any other's would be left uncommitted.
	if o.Rescaled() && (op.Kind != plan.KindSink || o.To < from && !sinkHandsOff(op)) {
		for _, ts := range m.Tasks {
			if ts.Operator == op.Name && ts.OperatorState != nil {
				return OperatorRestore{}, fmt.Errorf("instance %d holds non-keyed operator state, which cannot be split: restore it at parallelism %d, not %d",
					ts.Instance, from, o.To)
			}
		}
	}
	if o.Rescaled() {
		if err := checkBroadcastState(m, op); err != nil {
			return OperatorRestore{}, err
		}
	}
	if !op.NeedsTable() {
		return o, nil
	}
	old, err := storedTable(m, op.Name, from)
	if err != nil {
		return OperatorRestore{}, err
	}
	if !o.Rescaled() {
		o.Table = old
		return o, nil
	}
	nt, moves, err := old.Rescale(o.To)
	if err != nil {
		return OperatorRestore{}, err
	}
	minimum, err := keygroups.MinMoves(old, o.To)
	if err != nil {
		return OperatorRestore{}, err
	}
	o.Table, o.Moved, o.Minimum = nt, len(moves), minimum
	return o, nil
}

// storedTable is operator op's key-group table in manifest m. A manifest
// without one (an operator that was not keyed when it was written) had the
// job's first table.
func storedTable(m *store.Manifest, op string, p int) (*keygroups.Table, error) {
	owners, ok := m.KeyGroups[op]
	if !ok {
		return keygroups.Contiguous(m.MaxParallelism, p)
	}
	return keygroups.FromOwners(m.MaxParallelism, p, m.KeyGroupEpochs[op], owners)
}

// Apply sets each operator's parallelism and key-group table in p to the
// plan's, and chooses implicit partitioners again for the new parallelisms. p must be the plan PlanRestore was given.
func (rp RestorePlan) Apply(p *plan.Job) {
	for i, op := range p.Operators {
		o := rp.Operators[i]
		op.Parallelism = o.To
		if o.Table != nil {
			op.Table = o.Table
		}
	}
	for _, e := range p.Edges {
		if e.Implicit {
			e.Partitioner = plan.ImplicitPartitioner(e.From.Parallelism, e.To.Parallelism)
		}
	}
}

// CheckRestorable reports whether manifest m can be restored into plan p as
// it stands (after RestorePlan.Apply), and says exactly what differs when it
// cannot.
func CheckRestorable(p *plan.Job, m *store.Manifest) error {
	rp, err := PlanRestore(p, m)
	if err != nil {
		return err
	}
	for i, op := range p.Operators {
		o := rp.Operators[i]
		if o.Pinned {
			return fmt.Errorf("checkpoint %d ran source %q at parallelism %d, now %d: a source resumes only at its checkpoint's parallelism",
				m.CheckpointID, op.Name, o.From, op.Parallelism)
		}
		if o.Table != nil && !o.Table.Equal(op.Table) {
			return fmt.Errorf("checkpoint %d: operator %q has a key-group table other than the checkpoint's (rescaled to parallelism %d)",
				m.CheckpointID, op.Name, o.To)
		}
	}
	return nil
}

// checkBroadcastState refuses to change the parallelism of op when the
// checkpoint holds channel state on one of its broadcast inputs. Each
// instance was at its own point of the broadcast stream when the checkpoint
// was captured, and an operator behind a broadcast edge may keep whatever
// its instance and parallelism say (keysum's claim keeps the keys whose
// index modulo its parallelism is its instance): no new instance can be
// given a position that is right for the keys it now keeps, so the restore
// would lose or repeat records. A checkpoint without such state (aligned,
// or nothing in flight there) rescales.
func checkBroadcastState(m *store.Manifest, op *plan.Operator) error {
	base := 0
	for _, e := range op.Inputs {
		n := m.Parallelism[e.From.Name]
		if e.Partitioner == plan.Broadcast {
			for _, ts := range m.Tasks {
				if ts.Operator != op.Name {
					continue
				}
				for _, c := range ts.Channels {
					if c.Input >= base && c.Input < base+n && c.Buffers > 0 {
						return fmt.Errorf("its broadcast input from %q holds channel state (instance %d, %d buffers): each instance was at its own point of the broadcast stream, which instances at a new parallelism cannot take over; restore it at parallelism %d, or from an aligned checkpoint",
							e.From.Name, ts.Instance, c.Buffers, m.Parallelism[op.Name])
					}
				}
			}
		}
		base += n
	}
	return nil
}
