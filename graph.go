package weir

import (
	"errors"
	"fmt"
	"slices"

	"github.com/weirstream/weir/internal/graphplan"
	"github.com/weirstream/weir/internal/plan"
)

// DefaultMaxParallelism is the number of key groups of a job unless set.
const DefaultMaxParallelism = 128

// Graph is a job's dataflow graph under construction.
type Graph struct {
	name string
	job  *plan.Job
	errs []error
	// parallelism is every operator's unless it sets its own (default 1).
	parallelism int
	// states are the keyed states made for this graph, each of which some
	// operator must declare; stateless names the keyed operators that
	// declare none (timers aside), in the order they were added.
	states    []*stateBinding
	stateless []string
	// Latency is the job's end-to-end latency histogram; any operator may record
	// into it and the run's result reports its quantiles.
	Latency *Histogram
}

// GraphOption configures a graph.
type GraphOption func(*Graph)

// WithMaxParallelism sets the number of key groups (the highest parallelism any
// keyed operator can ever have). It never changes for a job.
func WithMaxParallelism(n int) GraphOption {
	return func(g *Graph) { g.job.MaxParallelism = n }
}

// WithParallelism sets how many instances every operator of the graph runs
// unless its own Parallelism option says otherwise (default 1).
func WithParallelism(p int) GraphOption {
	return func(g *Graph) { g.parallelism = p }
}

// NewGraph starts an empty graph for the job name.
func NewGraph(name string, opts ...GraphOption) *Graph {
	g := &Graph{name: name, job: &plan.Job{Name: name, MaxParallelism: DefaultMaxParallelism}, Latency: NewHistogram(), parallelism: 1}
	for _, o := range opts {
		o(g)
	}
	return g
}

// Name is the job's name.
func (g *Graph) Name() string { return g.name }

// Validate checks the graph as Run does before it starts anything: every
// operator named and fed by this graph's streams, parallelisms in range, and
// every keyed state declared by the operator that uses it (see WithState).
func (g *Graph) Validate() error {
	_, err := g.plan()
	return err
}

func init() {
	graphplan.Register(func(v any) (*plan.Job, error) {
		g, ok := v.(*Graph)
		if !ok || g == nil {
			return nil, fmt.Errorf("graphplan: %T is not a *weir.Graph", v)
		}
		return g.plan()
	})
}

// plan checks the graph and returns its execution plan (the graph's own job).
func (g *Graph) plan() (*plan.Job, error) {
	errs := append(slices.Clip(g.errs), g.undeclaredStates()...)
	if len(errs) > 0 {
		return nil, fmt.Errorf("graph %q: %w", g.name, errors.Join(errs...))
	}
	if err := g.job.Validate(); err != nil {
		return nil, err
	}
	return g.job, nil
}

// Parallelisms returns each operator's parallelism by name.
func (g *Graph) Parallelisms() map[string]int {
	m := map[string]int{}
	for _, op := range g.job.Operators {
		m[op.Name] = op.Parallelism
	}
	return m
}

// opConfig collects per-operator options.
type opConfig struct {
	parallelism int
	states      []StateDescriptor
}

// OpOption configures one operator: Parallelism, WithState.
type OpOption struct{ apply func(*opConfig) }

// Parallelism sets how many instances of the operator run (default: the
// graph's, see WithParallelism).
func Parallelism(p int) OpOption { return OpOption{func(c *opConfig) { c.parallelism = p }} }

// WithState declares the keyed state a keyed process function uses.
func WithState(states ...StateDescriptor) OpOption {
	return OpOption{func(c *opConfig) { c.states = append(c.states, states...) }}
}

// addOperator appends an operator fed by the given upstream streams.
func (g *Graph) addOperator(name string, kind plan.Kind, opts []OpOption, inputs ...upstream) (*plan.Operator, *opConfig) {
	cfg := &opConfig{parallelism: g.parallelism}
	for _, o := range opts {
		if o.apply != nil {
			o.apply(cfg)
		}
	}
	op := &plan.Operator{ID: len(g.job.Operators), Name: name, Kind: kind, Parallelism: cfg.parallelism}
	if name == "" {
		g.errs = append(g.errs, fmt.Errorf("operator %d has no name", op.ID))
	}
	g.job.Operators = append(g.job.Operators, op)
	for _, in := range inputs {
		g.addInput(op, in)
	}
	return op, cfg
}

// addInput adds the edge that feeds op from in.
func (g *Graph) addInput(op *plan.Operator, in upstream) {
	if in.from == nil {
		g.errs = append(g.errs, fmt.Errorf("operator %q: input stream is empty (not made by this graph)", op.Name))
		return
	}
	part := in.partitioner
	if !in.explicit {
		part = plan.ImplicitPartitioner(in.from.Parallelism, op.Parallelism)
	}
	e := &plan.Edge{ID: len(g.job.Edges), From: in.from, To: op, Partitioner: part, Implicit: !in.explicit, NewWriter: in.newWriter, Groups: in.groups, Recycle: in.recycle, Codec: in.codec}
	g.job.Edges = append(g.job.Edges, e)
	in.from.Outputs = append(in.from.Outputs, e)
	op.Inputs = append(op.Inputs, e)
}

// upstream is how a stream feeds the next operator.
type upstream struct {
	from        *plan.Operator
	partitioner plan.Partitioner
	explicit    bool
	newWriter   func(plan.WriterConfig) (plan.EdgeWriter, error)
	groups      func(maxParallelism int) (plan.RecordGroups, error)
	recycle     func(plan.Batch)
	codec       plan.BatchCodec
}

// made records a keyed state made for g, so that validation can find it if
// no operator declares it.
func (g *Graph) made(b *stateBinding) {
	if g != nil {
		g.states = append(g.states, b)
	}
}

// undeclaredStates is an error for each state made for g that no operator
// declares with WithState, naming the keyed operators that declare none:
// the ones whose function may use it.
func (g *Graph) undeclaredStates() []error {
	var errs []error
	for _, b := range g.states {
		if b.op != "" {
			continue
		}
		switch len(g.stateless) {
		case 0:
			errs = append(errs, fmt.Errorf("state %q is declared by no operator: pass it with weir.WithState to the keyed operator that uses it", b.name))
		case 1:
			errs = append(errs, fmt.Errorf("state %q is declared by no operator: operator %q declares no state; pass it with weir.WithState to the operator that uses it", b.name, g.stateless[0]))
		default:
			errs = append(errs, fmt.Errorf("state %q is declared by no operator: operators %q declare no state; pass it with weir.WithState to the one that uses it", b.name, g.stateless))
		}
	}
	return errs
}
