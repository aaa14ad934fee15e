// Package graphplan hands the module's own packages (the node agent, tests
// and benchmarks) the execution plan of a weir.Graph, which the public API
// does not expose. Package weir registers the accessor when it is
// initialised, so any caller holding a *weir.Graph can use it.
package graphplan

import (
	"errors"

	"github.com/weirstream/weir/internal/plan"
)

var of func(g any) (*plan.Job, error)

// Register sets the accessor; package weir calls it once, at init.
func Register(f func(g any) (*plan.Job, error)) { of = f }

// Of checks g (a *weir.Graph) and returns its plan: the graph's own job,
// the same one each call, which a runtime configures and runs.
func Of(g any) (*plan.Job, error) {
	if of == nil {
		return nil, errors.New("graphplan: package weir is not linked")
	}
	return of(g)
}
