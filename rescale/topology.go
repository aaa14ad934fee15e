package rescale

import (
	"fmt"
	"slices"

	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/keygroups"
)

// Topology is what the planner needs to know of a running job: its
// operators with their parallelism and key-group tables, and its edges. It
// is a plain value (no functions), so a Plan can carry it and be replayed.
type Topology struct {
	Job            string     `msgpack:"job"`
	MaxParallelism int        `msgpack:"max"`
	Operators      []Operator `msgpack:"ops"`
	Edges          []Edge     `msgpack:"edges"`
}

// Operator is one operator of a Topology.
type Operator struct {
	Name        string `msgpack:"name"`
	Parallelism int    `msgpack:"p"`
	// Source is true for a source: its read positions are per instance, so
	// a live rescale refuses to change its parallelism.
	Source bool `msgpack:"source,omitempty"`
	// OperatorState is true for an operator whose instances hold non-keyed
	// state, which cannot be split or merged.
	OperatorState bool `msgpack:"opstate,omitempty"`
	// StagesOutput is true for a sink whose instances stage their output per
	// checkpoint and commit it when the checkpoint completes (two-phase).
	// Instances may be added; they may be removed only if HandsOff.
	StagesOutput bool `msgpack:"stages,omitempty"`
	// HandsOff is true for a StagesOutput sink whose instances can hand
	// what they staged and have not committed to another instance, which
	// commits it: a removed instance hands its output to StagedOwner.
	// Without it a removed instance's uncommitted output would be a
	// transaction only it can commit, so none may be removed.
	HandsOff bool `msgpack:"handsoff,omitempty"`
	// MaxInstances bounds the operator's parallelism (0: no bound), for the
	// reason Bound gives (a file sink runs as one instance with checkpoints).
	MaxInstances int    `msgpack:"maxi,omitempty"`
	Bound        string `msgpack:"bound,omitempty"`
	// Table is the operator's current key-group table (nil for an operator
	// that needs none).
	Table *keygroups.Table `msgpack:"table,omitempty"`
}

// Edge is one edge of a Topology.
type Edge struct {
	From string `msgpack:"from"`
	To   string `msgpack:"to"`
	// Partitioner is the edge's partitioner as users write it (forward,
	// rebalance, shuffle, broadcast, hash).
	Partitioner string `msgpack:"part"`
	// Implicit is true when the graph chose the partitioner from the
	// parallelisms (forward when equal, rebalance otherwise); it is chosen
	// again when a rescale changes them.
	Implicit bool `msgpack:"implicit,omitempty"`
}

// TopologyOf describes plan p as it runs now. An operator's OperatorState is
// left false: whether instances hold non-keyed state is known from the
// latest checkpoint, not from the plan (set it with WithOperatorState).
func TopologyOf(p *plan.Job) Topology {
	t := Topology{Job: p.Name, MaxParallelism: p.MaxParallelism}
	for _, op := range p.Operators {
		t.Operators = append(t.Operators, Operator{Name: op.Name, Parallelism: op.Parallelism,
			Source: op.Kind == plan.KindSource, Table: op.Table.Clone()})
	}
	for _, e := range p.Edges {
		t.Edges = append(t.Edges, Edge{From: e.From.Name, To: e.To.Name, Partitioner: e.Partitioner.String(), Implicit: e.Implicit})
	}
	return t
}

// WithOperatorState returns t with OperatorState set on the named operators.
func (t Topology) WithOperatorState(names ...string) Topology {
	ops := append([]Operator(nil), t.Operators...)
	for i := range ops {
		for _, n := range names {
			if ops[i].Name == n {
				ops[i].OperatorState = true
			}
		}
	}
	t.Operators = ops
	return t
}

// WithStagedOutput returns t with StagesOutput set on the named operators.
func (t Topology) WithStagedOutput(names ...string) Topology {
	return t.withSet(names, func(op *Operator) { op.StagesOutput = true })
}

// WithHandOff returns t with HandsOff set on the named operators.
func (t Topology) WithHandOff(names ...string) Topology {
	return t.withSet(names, func(op *Operator) { op.HandsOff = true })
}

// withSet returns t with set applied to the named operators (a copy).
func (t Topology) withSet(names []string, set func(*Operator)) Topology {
	ops := append([]Operator(nil), t.Operators...)
	for i := range ops {
		if slices.Contains(names, ops[i].Name) {
			set(&ops[i])
		}
	}
	t.Operators = ops
	return t
}

// StagedOwner is the instance, of parallelism remaining ones, that takes
// over the staged output of removed instance removed (removed mod
// parallelism), in a live rescale and in a restore at fewer instances alike.
func StagedOwner(removed, parallelism int) int { return removed % parallelism }

// index returns the position of the named operator, or -1.
func (t Topology) index(name string) int {
	for i, op := range t.Operators {
		if op.Name == name {
			return i
		}
	}
	return -1
}

// check refuses a topology that names an unknown operator in an edge, names
// an operator twice, or carries a table that does not fit its operator.
func (t Topology) check() error {
	seen := map[string]bool{}
	for _, op := range t.Operators {
		if seen[op.Name] {
			return fmt.Errorf("topology: operator %q listed twice", op.Name)
		}
		seen[op.Name] = true
		if err := keygroups.Validate(t.MaxParallelism, op.Parallelism); err != nil {
			return fmt.Errorf("topology: operator %q: %w", op.Name, err)
		}
		if op.Table == nil {
			continue
		}
		if err := op.Table.Validate(); err != nil {
			return fmt.Errorf("topology: operator %q: %w", op.Name, err)
		}
		if op.Table.Parallelism != op.Parallelism || op.Table.MaxParallelism != t.MaxParallelism {
			return fmt.Errorf("topology: operator %q runs %d of %d key groups, its table is for %d of %d",
				op.Name, op.Parallelism, t.MaxParallelism, op.Table.Parallelism, op.Table.MaxParallelism)
		}
	}
	for _, e := range t.Edges {
		if !seen[e.From] || !seen[e.To] {
			return fmt.Errorf("topology: edge %s → %s names an unknown operator", e.From, e.To)
		}
	}
	return nil
}
