package node

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/weirstream/weir/cluster"
	"github.com/weirstream/weir/rescale"
)

// operatorParallelismFlag is the job flag that sets operators' parallelism:
// the job record keeps a committed rescale's parallelisms in it, so a
// takeover (or a restart of the job from its record) builds the job at
// them and restores its latest checkpoint rescaled to them.
const operatorParallelismFlag = "operator-parallelism"

// recordWait bounds one write of a rescale into the job's record.
const recordWait = 10 * time.Second

// recordTries is how often a write of a rescale into the job's record is
// tried when the record changed between its read and its write.
const recordTries = 5

// recordRescalePlanned adds a rescale that has started to the job's record,
// as running.
func (a *Agent) recordRescalePlanned(job string, p *rescale.Plan, started time.Time) error {
	e := cluster.RescaleEntry{Seq: p.Input.Seq, Coordinator: a.cfg.ID, State: cluster.RescaleRunning, StartedUnixNano: started.UnixNano()}
	for _, c := range p.Changes {
		e.Changes = append(e.Changes, cluster.RescaleChange{Operator: c.Operator, From: c.From, To: c.To})
	}
	return a.updateRecord(job, func(rec *cluster.JobRecord) error {
		rec.Rescales = rec.Rescales.Planned(e)
		return nil
	})
}

// recordRescaleEnded writes a rescale's outcome into the job's record: a
// committed one's figures and new parallelisms (so a takeover, or a
// restart of the job from its record, builds the job at them), or why it
// failed.
func (a *Agent) recordRescaleEnded(job string, p *rescale.Plan, res rescale.Result, rerr error) error {
	return a.updateRecord(job, func(rec *cluster.JobRecord) error {
		if rerr != nil {
			rec.Rescales = rec.Rescales.Ended(a.cfg.ID, p.Input.Seq, cluster.RescaleFailed, rerr.Error(), nil)
			return nil
		}
		set := map[string]int{}
		for _, c := range p.Changes {
			set[c.Operator] = c.To
		}
		args, err := withOperatorParallelism(rec.Args, set)
		if err != nil {
			return err
		}
		rec.Args = args
		rec.Rescales = rec.Rescales.Ended(a.cfg.ID, p.Input.Seq, cluster.RescaleCommitted, "", rescaleFigures(res))
		return nil
	})
}

// updateRecord changes the job's record with change, at the revision it
// read: a record changed meanwhile (restarts counted, say) is read again.
func (a *Agent) updateRecord(job string, change func(*cluster.JobRecord) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), recordWait)
	defer cancel()
	for try := 1; ; try++ {
		rec, rev, err := a.jobs.Get(ctx, job)
		if err != nil {
			return fmt.Errorf("job registry: %w", err)
		}
		if err := change(&rec); err != nil {
			return err
		}
		_, err = a.jobs.Update(ctx, rec, rev)
		if err == nil {
			return nil
		}
		if !errors.Is(err, cluster.ErrJobChanged) || try == recordTries {
			return fmt.Errorf("job registry: %w", err)
		}
	}
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
