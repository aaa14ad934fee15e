package weir

import (
	"fmt"

	"github.com/weirstream/weir/state"
)

// StateDescriptor is a keyed state made by NewValueState, NewMapState or
// NewListState, to hand to WithState. Only package weir implements it.
type StateDescriptor interface {
	stateName() string
	newTable(maxParallelism int) state.Table
	bind(g *Graph, op string, index int) error
}

// stateBinding ties a descriptor to its graph and the one operator that
// uses it.
type stateBinding struct {
	name  string
	g     *Graph // the graph the state was made for
	op    string
	index int
}

// newBinding makes a state of g, which g's validation checks is declared.
func newBinding(g *Graph, name string) stateBinding {
	return stateBinding{name: name, g: g}
}

func (b *stateBinding) stateName() string { return b.name }

func (b *stateBinding) bind(g *Graph, op string, index int) error {
	switch {
	case b.g == nil:
		return fmt.Errorf("operator %q: state %q was made without a graph: make it with weir.NewValueState(g, ...) (or NewMapState, NewListState)", op, b.name)
	case b.g != g:
		return fmt.Errorf("operator %q: state %q was made for graph %q, not this one", op, b.name, b.g.name)
	case b.op != "" && b.op != op:
		return fmt.Errorf("state %q is used by operator %q and %q: declare one per operator", b.name, b.op, op)
	}
	b.op, b.index = op, index
	return nil
}

// table finds this state's table in the current task.
func (b *stateBinding) table(ks KeyScope) state.Table {
	c := ks.scope()
	return c.tables[b.at(c)]
}

// at is the index of this state's table in c's task. A state the task's
// operator did not declare with WithState panics with a
// *StateNotDeclaredError, which the operator's call returns as its error.
func (b *stateBinding) at(c *keyedCore) int {
	if b.op != c.op {
		panic(&StateNotDeclaredError{State: b.name, Operator: c.op, DeclaredBy: b.op})
	}
	return b.index
}

// StateNotDeclaredError is a keyed state used by an operator that did not
// declare it with WithState; the run fails with it.
type StateNotDeclaredError struct {
	State, Operator string
	// DeclaredBy is the operator that declared it ("" when none did).
	DeclaredBy string
}

func (e *StateNotDeclaredError) Error() string {
	if e.DeclaredBy != "" {
		return fmt.Sprintf("operator %q uses state %q, which operator %q declares: declare one state per operator with weir.WithState", e.Operator, e.State, e.DeclaredBy)
	}
	return fmt.Sprintf("operator %q uses state %q without declaring it: pass it to the operator with weir.WithState", e.Operator, e.State)
}

// ValueState holds one value of type T per key.
type ValueState[T any] struct{ stateBinding }

// NewValueState makes a value state of g; pass it to the operator that uses
// it with WithState (g's validation fails while no operator declares it).
func NewValueState[T any](g *Graph, name string) *ValueState[T] {
	s := &ValueState[T]{newBinding(g, name)}
	g.made(&s.stateBinding)
	return s
}

func (s *ValueState[T]) newTable(max int) state.Table { return state.NewValueTable[T](s.name, max) }

// Get returns the current key's value, or the zero value if there is none.
func (s *ValueState[T]) Get(ctx KeyScope) T {
	v, _ := s.Value(ctx)
	return v
}

// Value returns the current key's value and whether it exists.
func (s *ValueState[T]) Value(ctx KeyScope) (T, bool) {
	c := ctx.scope()
	return c.tables[s.at(c)].(*state.ValueTable[T]).Get(c.group, c.key)
}

// Set stores the current key's value.
func (s *ValueState[T]) Set(ctx KeyScope, v T) {
	c := ctx.scope()
	c.tables[s.at(c)].(*state.ValueTable[T]).Put(c.group, c.key, v)
}

// Clear removes the current key's value.
func (s *ValueState[T]) Clear(ctx KeyScope) {
	c := ctx.scope()
	c.tables[s.at(c)].(*state.ValueTable[T]).Delete(c.group, c.key)
}

// MapState holds a map from UK to UV per key.
type MapState[UK comparable, UV any] struct{ stateBinding }

// NewMapState makes a map state of g; pass it to the operator that uses it
// with WithState (g's validation fails while no operator declares it).
func NewMapState[UK comparable, UV any](g *Graph, name string) *MapState[UK, UV] {
	s := &MapState[UK, UV]{newBinding(g, name)}
	g.made(&s.stateBinding)
	return s
}

func (s *MapState[UK, UV]) newTable(max int) state.Table {
	return state.NewMapTable[UK, UV](s.name, max)
}

func (s *MapState[UK, UV]) t(ctx KeyScope) (*state.MapTable[UK, UV], *keyedCore) {
	c := ctx.scope()
	return c.tables[s.at(c)].(*state.MapTable[UK, UV]), c
}

// Get returns the entry uk of the current key's map.
func (s *MapState[UK, UV]) Get(ctx KeyScope, uk UK) (UV, bool) {
	t, c := s.t(ctx)
	return t.Get(c.group, c.key, uk)
}

// Put sets the entry uk of the current key's map.
func (s *MapState[UK, UV]) Put(ctx KeyScope, uk UK, uv UV) {
	t, c := s.t(ctx)
	t.Put(c.group, c.key, uk, uv)
}

// Delete removes the entry uk of the current key's map.
func (s *MapState[UK, UV]) Delete(ctx KeyScope, uk UK) {
	t, c := s.t(ctx)
	t.Delete(c.group, c.key, uk)
}

// Range calls fn for every entry of the current key's map until fn returns false.
func (s *MapState[UK, UV]) Range(ctx KeyScope, fn func(UK, UV) bool) {
	t, c := s.t(ctx)
	for k, v := range t.Entries(c.group, c.key) {
		if !fn(k, v) {
			return
		}
	}
}

// ListState holds a list of T per key.
type ListState[T any] struct{ stateBinding }

// NewListState makes a list state of g; pass it to the operator that uses
// it with WithState (g's validation fails while no operator declares it).
func NewListState[T any](g *Graph, name string) *ListState[T] {
	s := &ListState[T]{newBinding(g, name)}
	g.made(&s.stateBinding)
	return s
}

func (s *ListState[T]) newTable(max int) state.Table { return state.NewListTable[T](s.name, max) }

// Get returns the current key's list (do not modify it).
func (s *ListState[T]) Get(ctx KeyScope) []T {
	c := ctx.scope()
	return c.tables[s.at(c)].(*state.ListTable[T]).Get(c.group, c.key)
}

// Add appends v to the current key's list.
func (s *ListState[T]) Add(ctx KeyScope, v T) {
	c := ctx.scope()
	c.tables[s.at(c)].(*state.ListTable[T]).Add(c.group, c.key, v)
}

// Clear empties the current key's list.
func (s *ListState[T]) Clear(ctx KeyScope) {
	c := ctx.scope()
	c.tables[s.at(c)].(*state.ListTable[T]).Clear(c.group, c.key)
}
