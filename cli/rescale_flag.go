package cli

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/weirstream/weir"
)

// rescaleSchedule is the value of --rescale: live rescales at times since the
// job started, "2s:count=3,4s:count=1,6s:count=4". An entry with a time
// starts a step; an entry without one (NAME=N) adds an operator to the step
// before it: "2s:count=3,sink=3".
type rescaleSchedule []weir.RescaleStep

// String renders the schedule as Set reads it back.
func (r *rescaleSchedule) String() string {
	var parts []string
	for _, st := range *r {
		for i, name := range slices.Sorted(maps.Keys(st.Parallelism)) {
			part := fmt.Sprintf("%s=%d", name, st.Parallelism[name])
			if i == 0 {
				part = st.After.String() + ":" + part
			}
			parts = append(parts, part)
		}
	}
	return strings.Join(parts, ",")
}

// Set adds the steps of s: times positive and strictly increasing,
// parallelisms from 1 to the default maxParallelism, an operator once per
// step.
func (r *rescaleSchedule) Set(s string) error {
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		entry := part
		if at, rest, ok := strings.Cut(part, ":"); ok {
			d, err := time.ParseDuration(at)
			if err != nil || d <= 0 {
				return fmt.Errorf("%q: want a positive time such as 2s before the colon", part)
			}
			if n := len(*r); n > 0 && d <= (*r)[n-1].After {
				return fmt.Errorf("%q: the steps' times must increase (%s comes after %s)", part, d, (*r)[n-1].After)
			}
			*r = append(*r, weir.RescaleStep{After: d, Parallelism: map[string]int{}})
			entry = rest
		} else if len(*r) == 0 {
			return fmt.Errorf("%q: the schedule starts with a time, e.g. 2s:count=3", part)
		}
		name, n, ok := strings.Cut(entry, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return fmt.Errorf("%q: want TIME:NAME=N (e.g. 2s:count=3), comma-separated", part)
		}
		p, err := strconv.Atoi(strings.TrimSpace(n))
		if err != nil || p < 1 || p > weir.DefaultMaxParallelism {
			return fmt.Errorf("%q: want a parallelism from 1 to %d", part, weir.DefaultMaxParallelism)
		}
		step := (*r)[len(*r)-1]
		if _, dup := step.Parallelism[name]; dup {
			return fmt.Errorf("%q: operator %q is named twice in the step at %s", part, name, step.After)
		}
		step.Parallelism[name] = p
	}
	return nil
}

// checkOperators reports an operator name the job does not have, listing
// the ones it has.
func (r rescaleSchedule) checkOperators(g *weir.Graph) error {
	have := g.Parallelisms()
	for _, st := range r {
		for _, name := range slices.Sorted(maps.Keys(st.Parallelism)) {
			if _, ok := have[name]; !ok {
				return fmt.Errorf("--rescale: the job has no operator %q (its operators: %s)",
					name, strings.Join(slices.Sorted(maps.Keys(have)), ", "))
			}
		}
	}
	return nil
}
