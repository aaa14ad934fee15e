package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/weirstream/weir/cluster/node"
)

// writeRescales prints, per job that was rescaled live, how often and the
// latest rescale's figures.
func writeRescales(w io.Writer, jobs []clusterJobState) {
	first := true
	for _, j := range jobs {
		rs := j.Rescales
		if rs == nil || rs.Last == nil {
			continue
		}
		if first {
			fmt.Fprintln(w)
			first = false
		}
		l := rs.Last
		fmt.Fprintf(w, "rescales of %s: %d; last #%d %s: took %.0f ms, moved %d key groups (fewest possible %d), %d bytes, longest pause %.0f ms\n",
			j.Name, rs.Count, l.Seq, rescaleChangesText(l.Changes), l.TookMs, l.Moved, l.Minimum, l.Bytes, l.LongestPauseMs)
	}
}

// rescaleChangesText is "op 2→3, other 4→1".
func rescaleChangesText(cs []node.RescaleChange) string {
	var parts []string
	for _, c := range cs {
		parts = append(parts, fmt.Sprintf("%s %d→%d", c.Operator, c.From, c.To))
	}
	return strings.Join(parts, ", ")
}
