package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/weirstream/weir/cluster"
)

// writeRescales prints, per job that was rescaled live, how often and its
// latest rescales with their outcome and figures: from the job's record,
// which outlives the coordinator that ran them, or else from its running
// coordinator.
func writeRescales(w io.Writer, jobs []clusterJobState) {
	first := true
	for _, j := range jobs {
		lines := rescaleLines(j)
		if len(lines) == 0 {
			continue
		}
		if first {
			fmt.Fprintln(w)
			first = false
		}
		for _, l := range lines {
			fmt.Fprintln(w, l)
		}
	}
}

// rescaleLines is what `node status` prints of a job's rescales: a line
// with the count and the latest, then one per earlier recorded rescale.
func rescaleLines(j clusterJobState) []string {
	h := j.JobRecord.Rescales
	if h == nil || len(h.Recent) == 0 {
		rs := j.Rescales
		if rs == nil || rs.Last == nil {
			return nil
		}
		l := rs.Last
		return []string{fmt.Sprintf("rescales of %s: %d; last #%d %s: committed, %s", j.Name, rs.Count, l.Seq, rescaleChangesText(l.Changes),
			figuresText(&cluster.RescaleFigures{TookMs: l.TookMs, Moved: l.Moved, Minimum: l.Minimum, Bytes: l.Bytes, LongestPauseMs: l.LongestPauseMs, Flow: l.Flow}))}
	}
	latest := h.Latest()
	lines := []string{fmt.Sprintf("rescales of %s: %d; last %s", j.Name, h.Count, entryText(j, *latest))}
	for i := len(h.Recent) - 2; i >= 0; i-- {
		lines = append(lines, "  "+entryText(j, h.Recent[i]))
	}
	return lines
}

// entryText is "#3 count 1→4: committed, took …" for one recorded rescale.
func entryText(j clusterJobState, e cluster.RescaleEntry) string {
	head := fmt.Sprintf("#%d %s", e.Seq, rescaleChangesText(e.Changes))
	switch e.State {
	case cluster.RescaleCommitted:
		if e.Figures == nil {
			return head + ": committed"
		}
		return head + ": committed, " + figuresText(e.Figures)
	case cluster.RescaleRunning:
		return head + ": running on " + e.Coordinator
	default: // failed, interrupted
		return fmt.Sprintf("%s: %s (%s)%s", head, e.State, e.Error, nowAt(j, e.Changes))
	}
}

// nowAt is "; count now runs 2 instances" for the operators of changes, as
// the job's coordinator places them ("" when it does not answer).
func nowAt(j clusterJobState, changes []cluster.RescaleChange) string {
	if len(j.Tasks) == 0 {
		return ""
	}
	var parts []string
	for _, c := range changes {
		n := 0
		for task := range j.Tasks {
			if strings.HasPrefix(task, c.Operator+"[") {
				n++
			}
		}
		parts = append(parts, fmt.Sprintf("%s now runs %d instances", c.Operator, n))
	}
	return "; " + strings.Join(parts, ", ")
}

// figuresText is a committed rescale's figures in words.
func figuresText(f *cluster.RescaleFigures) string {
	s := fmt.Sprintf("took %.0f ms, moved %d key groups (fewest possible %d), %d bytes, longest pause %.0f ms",
		f.TookMs, f.Moved, f.Minimum, f.Bytes, f.LongestPauseMs)
	if f.Flow != nil {
		s += "; " + f.Flow.String()
	}
	return s
}

// rescaleChangesText is "op 2→3, other 4→1".
func rescaleChangesText(cs []cluster.RescaleChange) string {
	var parts []string
	for _, c := range cs {
		parts = append(parts, fmt.Sprintf("%s %d→%d", c.Operator, c.From, c.To))
	}
	return strings.Join(parts, ", ")
}
