package cli

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/weirstream/weir/cluster/node"
)

// jobRates are a job's rates summed over the nodes that answered.
type jobRates struct {
	Job            string          `json:"job"`
	RecordsInPerS  float64         `json:"records_in_per_s"`
	RecordsOutPerS float64         `json:"records_out_per_s"`
	Operators      []operatorRates `json:"operators"`
}

// operatorRates is an operator over all its instances: records in per
// second summed, backpressured and busy shares averaged over the instances.
type operatorRates struct {
	Operator      string  `json:"operator"`
	Tasks         int     `json:"tasks"`
	RecordsInPerS float64 `json:"records_in_per_s"`
	Backpressured float64 `json:"backpressured"`
	Busy          float64 `json:"busy"`
}

// mergeRates sums each job's rates over the nodes' replies.
func mergeRates(replies []node.StatusReply) []jobRates {
	byJob := map[string]*jobRates{}
	ops := map[string]map[string]*operatorRates{}
	for _, sr := range replies {
		for _, r := range sr.Rates {
			j := byJob[r.Job]
			if j == nil {
				j = &jobRates{Job: r.Job}
				byJob[r.Job], ops[r.Job] = j, map[string]*operatorRates{}
			}
			j.RecordsInPerS += r.RecordsInPerS
			j.RecordsOutPerS += r.RecordsOutPerS
			for _, o := range r.Operators {
				m := ops[r.Job][o.Operator]
				if m == nil {
					m = &operatorRates{Operator: o.Operator}
					ops[r.Job][o.Operator] = m
				}
				m.RecordsInPerS += o.RecordsInPerS
				m.Backpressured += o.Backpressured * float64(o.Tasks) // averaged below
				m.Busy += o.Busy * float64(o.Tasks)
				m.Tasks += o.Tasks
			}
		}
	}
	out := make([]jobRates, 0, len(byJob))
	for _, name := range slices.Sorted(maps.Keys(byJob)) {
		j := byJob[name]
		for _, op := range slices.Sorted(maps.Keys(ops[name])) {
			m := ops[name][op]
			if m.Tasks > 0 {
				m.Backpressured /= float64(m.Tasks)
				m.Busy /= float64(m.Tasks)
			}
			j.Operators = append(j.Operators, *m)
		}
		out = append(out, *j)
	}
	return out
}

// restartsText is a job's restarts with their causes: "2 (node_lost 1, task_failed 1)".
func restartsText(n int, causes map[string]int) string {
	if len(causes) == 0 {
		return fmt.Sprint(n)
	}
	var parts []string
	for _, c := range slices.Sorted(maps.Keys(causes)) {
		parts = append(parts, fmt.Sprintf("%s %d", c, causes[c]))
	}
	return fmt.Sprintf("%d (%s)", n, strings.Join(parts, ", "))
}

// writeRates prints each running job's records per second, its latest
// checkpoint's duration and age, and its operators' backpressure.
func writeRates(w io.Writer, st *clusterStatus) error {
	if len(st.Rates) == 0 {
		return nil
	}
	latest := map[string]node.CheckpointBrief{}
	for _, j := range st.Jobs {
		if n := len(j.Checkpoints); n > 0 {
			latest[j.Name] = j.Checkpoints[n-1]
		}
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "JOB\tRECORDS/S IN\tRECORDS/S OUT\tLATEST CHECKPOINT\tBACKPRESSURE (SHARE OF TIME WITHOUT OUTPUT CREDIT)")
	for _, r := range st.Rates {
		cp := "none yet"
		if c, ok := latest[r.Job]; ok {
			cp = fmt.Sprintf("%d: took %.0f ms, %.1f s ago", c.ID, c.DurationMs, c.AgeS)
		}
		var bp []string
		for _, o := range r.Operators {
			bp = append(bp, fmt.Sprintf("%s %.0f%%", o.Operator, 100*o.Backpressured))
		}
		fmt.Fprintf(tw, "%s\t%.0f\t%.0f\t%s\t%s\n", r.Job, r.RecordsInPerS, r.RecordsOutPerS, cp, strings.Join(bp, ", "))
	}
	return tw.Flush()
}
