package node

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/weirstream/weir/rescale"
)

// operatorParallelismFlag is the job flag that sets operators' parallelism:
// the job record keeps a committed rescale's parallelisms in it, so a
// takeover (or a restart of the job from its record) builds the job at
// them and restores its latest checkpoint rescaled to them.
const operatorParallelismFlag = "operator-parallelism"

// recordRescale writes a committed rescale's parallelisms into the job's
// record.
func (a *Agent) recordRescale(job string, p *rescale.Plan) error {
	set := map[string]int{}
	for _, c := range p.Changes {
		set[c.Operator] = c.To
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rec, _, err := a.jobs.Get(ctx, job)
	if err != nil {
		return fmt.Errorf("job registry: %w", err)
	}
	args, err := withOperatorParallelism(rec.Args, set)
	if err != nil {
		return err
	}
	rec.Args = args
	if _, err := a.jobs.Put(ctx, rec); err != nil {
		return fmt.Errorf("job registry: %w", err)
	}
	return nil
}

// withOperatorParallelism returns job flags args with the parallelisms of
// set: every --operator-parallelism flag is taken out, and one that merges
// them with set (set wins) goes at the end.
func withOperatorParallelism(args []string, set map[string]int) ([]string, error) {
	merged := map[string]int{}
	var out []string
	for i := 0; i < len(args); i++ {
		name, value, inline := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
		if !strings.HasPrefix(args[i], "-") || name != operatorParallelismFlag {
			out = append(out, args[i])
			continue
		}
		if !inline {
			if i+1 >= len(args) {
				return nil, fmt.Errorf("--%s without a value", operatorParallelismFlag)
			}
			i++
			value = args[i]
		}
		for _, part := range strings.Split(value, ",") {
			op, n, ok := strings.Cut(part, "=")
			p, err := strconv.Atoi(strings.TrimSpace(n))
			if !ok || err != nil {
				return nil, fmt.Errorf("--%s %q: want NAME=N", operatorParallelismFlag, part)
			}
			merged[strings.TrimSpace(op)] = p
		}
	}
	maps.Copy(merged, set)
	if len(merged) == 0 {
		return out, nil
	}
	var parts []string
	for _, op := range slices.Sorted(maps.Keys(merged)) {
		parts = append(parts, fmt.Sprintf("%s=%d", op, merged[op]))
	}
	return append(out, "--"+operatorParallelismFlag, strings.Join(parts, ",")), nil
}
