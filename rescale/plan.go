package rescale

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/weirstream/weir/cluster/placement"
	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/internal/task"
	"github.com/weirstream/weir/keygroups"
)

// ErrNothingToDo is wrapped by NewPlan when every requested operator already
// runs at the requested parallelism.
var ErrNothingToDo = errors.New("rescale changes nothing")

// Target is one requested operator parallelism.
type Target struct {
	Operator    string `msgpack:"op"`
	Parallelism int    `msgpack:"p"`
}

// Locality is the state-location input of placement: where the nodes are,
// how many slots each can give the new instances, and which nodes hold a
// local copy of each key group's latest state. Without nodes, the new
// instances are not placed (one process runs them all).
type Locality struct {
	Nodes []placement.Slot `msgpack:"nodes,omitempty"`
	// Copies are the local copies of key groups' latest state.
	Copies []GroupCopy `msgpack:"copies,omitempty"`
}

// GroupCopy is a node's local copy of one key group of an operator.
type GroupCopy struct {
	Operator string `msgpack:"op"`
	Group    int    `msgpack:"g"`
	Node     string `msgpack:"node"`
	// Bytes is the copy's size; 0 when unknown.
	Bytes int64 `msgpack:"bytes,omitempty"`
}

// Input is everything a Plan is computed from.
type Input struct {
	// Seq numbers the job's rescales (1 for the first); it names the
	// rescale barrier.
	Seq      uint64   `msgpack:"seq"`
	Topology Topology `msgpack:"topology"`
	Request  []Target `msgpack:"request"`
	Locality Locality `msgpack:"locality"`
}

// Plan is a computed rescale: for each operator that changes, its new table
// and the key groups that move; the instances added and removed; where the
// new instances run. It is a value: it encodes with msgpack (Encode), logs
// (MarshalZerologObject) and can be recomputed from its Input (Replay).
type Plan struct {
	Input Input `msgpack:"input"`
	// Changes are the operators whose parallelism changes, in topology order.
	Changes []Change `msgpack:"changes"`
	// Together lists, for each set of operators joined by explicit forward
	// edges that changes, its members in topology order (sets of one are
	// left out): they must run at one parallelism, so they change together.
	Together [][]string `msgpack:"together,omitempty"`
	// Partitioners are the implicit edges whose partitioner the new
	// parallelisms change (forward ↔ rebalance).
	Partitioners []EdgeSwitch `msgpack:"partitioners,omitempty"`
	// Placement says where each added instance runs (empty without nodes).
	Placement []Placed `msgpack:"placement,omitempty"`
}

// Change is one operator's part of a Plan.
type Change struct {
	Operator string `msgpack:"op"`
	From     int    `msgpack:"from"`
	To       int    `msgpack:"to"`
	// Old and New are the operator's tables before and after (nil for an
	// operator without a table).
	Old *keygroups.Table `msgpack:"old,omitempty"`
	New *keygroups.Table `msgpack:"new,omitempty"`
	// Moves are the key groups that change owner, ascending; Minimum is the
	// fewest any balanced table for To instances could move.
	Moves   []keygroups.Move `msgpack:"moves,omitempty"`
	Minimum int              `msgpack:"min"`
	// Added and Removed are the instance indices that start and stop.
	Added   []int `msgpack:"added,omitempty"`
	Removed []int `msgpack:"removed,omitempty"`
}

// EdgeSwitch is an implicit edge whose partitioner changes.
type EdgeSwitch struct {
	From string `msgpack:"from"`
	To   string `msgpack:"to"`
	Old  string `msgpack:"old"`
	New  string `msgpack:"new"`
}

// Placed is the node of one added instance.
type Placed struct {
	Operator string `msgpack:"op"`
	Instance int    `msgpack:"i"`
	Node     string `msgpack:"node"`
}

// Moved returns the number of key groups the plan moves, over all operators.
func (p *Plan) Moved() int {
	n := 0
	for _, c := range p.Changes {
		n += len(c.Moves)
	}
	return n
}

// Minimum returns the fewest key groups any balanced plan could move.
func (p *Plan) Minimum() int {
	n := 0
	for _, c := range p.Changes {
		n += c.Minimum
	}
	return n
}

// Change returns the named operator's change, if it changes.
func (p *Plan) Change(op string) (Change, bool) {
	for _, c := range p.Changes {
		if c.Operator == op {
			return c, true
		}
	}
	return Change{}, false
}

// NewPlan computes the plan for in. It refuses, saying why: an unknown
// operator, a parallelism outside [1, maxParallelism], an operator named
// twice, a source (its read positions are per instance), an operator with
// non-keyed state, fewer instances of a sink that stages its output per
// checkpoint and cannot hand it off, two operators joined by explicit forward edges asked for
// different parallelisms, and a request that changes nothing. Operators
// joined to a requested one by explicit forward edges change with it. New
// instances are placed by placement.Assign, preferring the nodes that hold
// the most bytes of the key groups they receive. NewPlan is pure and
// deterministic.
func NewPlan(in Input) (*Plan, error) {
	topo := in.Topology
	if err := topo.check(); err != nil {
		return nil, fmt.Errorf("rescale %d: %w", in.Seq, err)
	}
	want, err := targets(topo, in.Request)
	if err != nil {
		return nil, fmt.Errorf("rescale %d of job %q: %w", in.Seq, topo.Job, err)
	}
	p := &Plan{Input: in}
	for _, set := range forwardSets(topo) {
		if err := widen(topo, set, want, p); err != nil {
			return nil, fmt.Errorf("rescale %d of job %q: %w", in.Seq, topo.Job, err)
		}
	}
	for _, op := range topo.Operators {
		to, ok := want[op.Name]
		if !ok || to == op.Parallelism {
			continue
		}
		c, err := change(op, to)
		if err != nil {
			return nil, fmt.Errorf("rescale %d of job %q: %w", in.Seq, topo.Job, err)
		}
		p.Changes = append(p.Changes, c)
	}
	if len(p.Changes) == 0 {
		return nil, fmt.Errorf("rescale %d of job %q: every operator already runs at the parallelism asked for: %w", in.Seq, topo.Job, ErrNothingToDo)
	}
	p.Partitioners = switches(topo, want)
	if p.Placement, err = place(topo, p.Changes, in.Locality); err != nil {
		return nil, fmt.Errorf("rescale %d of job %q: %w", in.Seq, topo.Job, err)
	}
	return p, nil
}

// targets checks the request and returns it as operator → parallelism.
func targets(topo Topology, req []Target) (map[string]int, error) {
	if len(req) == 0 {
		return nil, errors.New("no operator to rescale")
	}
	want := map[string]int{}
	for _, r := range req {
		i := topo.index(r.Operator)
		if i < 0 {
			return nil, fmt.Errorf("no operator %q (operators: %s)", r.Operator, names(topo))
		}
		if _, dup := want[r.Operator]; dup {
			return nil, fmt.Errorf("operator %q asked for twice", r.Operator)
		}
		if err := keygroups.Validate(topo.MaxParallelism, r.Parallelism); err != nil {
			return nil, fmt.Errorf("operator %q: %w", r.Operator, err)
		}
		want[r.Operator] = r.Parallelism
	}
	return want, nil
}

func names(topo Topology) string {
	var ns []string
	for _, op := range topo.Operators {
		ns = append(ns, op.Name)
	}
	return strings.Join(ns, ", ")
}

// forwardSets groups the operators joined by explicit forward edges; each set
// lists operator indices ascending.
func forwardSets(topo Topology) [][]int {
	uf := plan.NewUnionFind(len(topo.Operators))
	for _, e := range topo.Edges {
		if e.Partitioner == plan.Forward.String() && !e.Implicit {
			uf.Union(topo.index(e.From), topo.index(e.To))
		}
	}
	byRoot := map[int][]int{}
	var roots []int
	for i := range topo.Operators {
		r := uf.Find(i)
		if byRoot[r] == nil {
			roots = append(roots, r)
		}
		byRoot[r] = append(byRoot[r], i)
	}
	sets := make([][]int, 0, len(roots))
	for _, r := range roots {
		sets = append(sets, byRoot[r])
	}
	return sets
}

// widen gives every member of a forward set the parallelism requested for
// any of them, and records the set in p.Together when it has several members.
func widen(topo Topology, set []int, want map[string]int, p *Plan) error {
	asked, by := 0, ""
	for _, i := range set {
		name := topo.Operators[i].Name
		w, ok := want[name]
		if !ok {
			continue
		}
		if by != "" && w != asked {
			return fmt.Errorf("operators %q and %q are joined by forward edges and must run at one parallelism, asked for %d and %d", by, name, asked, w)
		}
		asked, by = w, name
	}
	if by == "" || asked == topo.Operators[set[0]].Parallelism {
		return nil
	}
	if len(set) > 1 {
		var members []string
		for _, i := range set {
			members = append(members, topo.Operators[i].Name)
			want[topo.Operators[i].Name] = asked
		}
		p.Together = append(p.Together, members)
	}
	return nil
}

// change plans one operator going to parallelism to.
func change(op Operator, to int) (Change, error) {
	if op.Source {
		return Change{}, fmt.Errorf("source %q cannot change parallelism live: its read positions are per instance (restore a checkpoint at the new parallelism instead)", op.Name)
	}
	if op.OperatorState {
		return Change{}, fmt.Errorf("operator %q holds non-keyed state, which cannot be split or merged", op.Name)
	}
	if op.MaxInstances > 0 && to > op.MaxInstances {
		return Change{}, fmt.Errorf("operator %q: %s, not %d", op.Name, op.Bound, to)
	}
	if op.StagesOutput && !op.HandsOff && to < op.Parallelism {
		return Change{}, fmt.Errorf("sink %q stages its output per instance until a checkpoint completes and cannot hand it to another instance: it can grow from %d instances, not shrink to %d (a removed instance's uncommitted output is a transaction only it can commit; a sink that implements weir.HandOffSink can shrink)",
			op.Name, op.Parallelism, to)
	}
	c := Change{Operator: op.Name, From: op.Parallelism, To: to, Old: op.Table}
	for i := op.Parallelism; i < to; i++ {
		c.Added = append(c.Added, i)
	}
	for i := to; i < op.Parallelism; i++ {
		c.Removed = append(c.Removed, i)
	}
	if op.Table == nil {
		return c, nil
	}
	nt, moves, err := op.Table.Rescale(to)
	if err != nil {
		return Change{}, fmt.Errorf("operator %q: %w", op.Name, err)
	}
	minimum, err := keygroups.MinMoves(op.Table, to)
	if err != nil {
		return Change{}, fmt.Errorf("operator %q: %w", op.Name, err)
	}
	c.New, c.Moves, c.Minimum = nt, moves, minimum
	return c, nil
}

// switches lists the implicit edges whose partitioner the new parallelisms
// change.
func switches(topo Topology, want map[string]int) []EdgeSwitch {
	par := func(name string) int {
		if w, ok := want[name]; ok {
			return w
		}
		return topo.Operators[topo.index(name)].Parallelism
	}
	var out []EdgeSwitch
	for _, e := range topo.Edges {
		if !e.Implicit {
			continue
		}
		if n := plan.ImplicitPartitioner(par(e.From), par(e.To)).String(); n != e.Partitioner {
			out = append(out, EdgeSwitch{From: e.From, To: e.To, Old: e.Partitioner, New: n})
		}
	}
	return out
}

// place puts the added instances on nodes: each one's score on a node is
// the bytes of the key groups it receives that the node holds locally.
func place(topo Topology, changes []Change, loc Locality) ([]Placed, error) {
	if len(loc.Nodes) == 0 {
		return nil, nil
	}
	copies := map[string]map[int][]placement.Copy{}
	for _, c := range loc.Copies {
		if copies[c.Operator] == nil {
			copies[c.Operator] = map[int][]placement.Copy{}
		}
		copies[c.Operator][c.Group] = append(copies[c.Operator][c.Group], placement.Copy{Node: c.Node, Bytes: c.Bytes})
	}
	var tasks []task.ID
	local := map[task.ID][]placement.Copy{}
	for _, c := range changes {
		id := topo.index(c.Operator)
		for _, i := range c.Added {
			t := task.ID{Operator: c.Operator, OperatorID: id, Instance: i}
			tasks = append(tasks, t)
			for _, m := range c.Moves {
				if m.To == i {
					local[t] = append(local[t], copies[c.Operator][m.Group]...)
				}
			}
		}
	}
	if len(tasks) == 0 {
		return nil, nil
	}
	where, err := placement.Assign(placement.Input{Tasks: tasks, Nodes: loc.Nodes, Local: local})
	if err != nil {
		return nil, fmt.Errorf("place new instances: %w", err)
	}
	out := make([]Placed, 0, len(tasks))
	for _, t := range tasks {
		out = append(out, Placed{Operator: t.Operator, Instance: t.Instance, Node: where[t]})
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Operator != out[j].Operator {
			return topo.index(out[i].Operator) < topo.index(out[j].Operator)
		}
		return out[i].Instance < out[j].Instance
	})
	return out, nil
}
