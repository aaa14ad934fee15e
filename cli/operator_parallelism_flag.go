package cli

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/weirstream/weir"
)

// operatorParallelism is the value of --operator-parallelism: operator name →
// instances, from NAME=N entries, comma-separated or in repeated flags.
type operatorParallelism map[string]int

// String renders the entries sorted by name, comma-separated, as Set reads
// them back (node submit forwards flags this way).
func (o operatorParallelism) String() string {
	names := slices.Sorted(maps.Keys(o))
	parts := make([]string, len(names))
	for i, name := range names {
		parts[i] = fmt.Sprintf("%s=%d", name, o[name])
	}
	return strings.Join(parts, ",")
}

// Set adds NAME=N entries: N from 1 to the default maxParallelism, each
// operator named once.
func (o operatorParallelism) Set(s string) error {
	for _, part := range strings.Split(s, ",") {
		name, n, ok := strings.Cut(part, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return fmt.Errorf("%q: want NAME=N (e.g. count=3), comma-separated", part)
		}
		p, err := strconv.Atoi(strings.TrimSpace(n))
		if err != nil || p < 1 || p > weir.DefaultMaxParallelism {
			return fmt.Errorf("%q: want a parallelism from 1 to %d", part, weir.DefaultMaxParallelism)
		}
		if _, dup := o[name]; dup {
			return fmt.Errorf("%q: operator %q is named twice", part, name)
		}
		o[name] = p
	}
	return nil
}

// checkOperators reports an operator name the job does not have, listing
// the ones it has.
func (o operatorParallelism) checkOperators(g *weir.Graph) error {
	have := g.Parallelisms()
	for _, name := range slices.Sorted(maps.Keys(o)) {
		if _, ok := have[name]; !ok {
			return fmt.Errorf("--operator-parallelism: the job has no operator %q (its operators: %s)",
				name, strings.Join(slices.Sorted(maps.Keys(have)), ", "))
		}
	}
	return nil
}
