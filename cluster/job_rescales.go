package cluster

import "github.com/weirstream/weir/rescale/flow"

// Live rescales as a job's record keeps them: the latest few, with their
// outcome and figures, so that `node status` shows them after the
// coordinator that ran them is gone.

// MaxRecordedRescales is how many of a job's latest rescales its record
// keeps.
const MaxRecordedRescales = 10

// Outcomes of a recorded rescale.
const (
	// RescaleRunning: planned and started, its outcome not recorded yet.
	RescaleRunning = "running"
	// RescaleCommitted: the job runs at its new parallelisms.
	RescaleCommitted = "committed"
	// RescaleFailed: aborted or refused; the job went on at the old ones.
	RescaleFailed = "failed"
	// RescaleInterrupted: its coordinator was lost before it recorded the
	// commit; the node that took the job over built it at the
	// parallelisms of the record, the old ones.
	RescaleInterrupted = "interrupted"
)

// RescaleHistory is a job's live rescales: how many were recorded and the
// latest MaxRecordedRescales of them, oldest first.
type RescaleHistory struct {
	Count  int            `msgpack:"count" json:"count"`
	Recent []RescaleEntry `msgpack:"recent" json:"recent"`
}

// RescaleEntry is one live rescale in a job's record.
type RescaleEntry struct {
	Seq uint64 `msgpack:"seq" json:"seq"`
	// Coordinator is the node that ran it.
	Coordinator string          `msgpack:"coord" json:"coordinator"`
	Changes     []RescaleChange `msgpack:"changes" json:"changes"`
	State       string          `msgpack:"state" json:"state"`
	Error       string          `msgpack:"error,omitempty" json:"error,omitempty"`
	// StartedUnixNano is when it was planned.
	StartedUnixNano int64 `msgpack:"started" json:"started_unix_nano"`
	// Figures are what a committed rescale measured.
	Figures *RescaleFigures `msgpack:"figures,omitempty" json:"figures,omitempty"`
}

// RescaleChange is one operator's parallelism before and after a rescale.
type RescaleChange struct {
	Operator string `msgpack:"op" json:"operator"`
	From     int    `msgpack:"from" json:"from"`
	To       int    `msgpack:"to" json:"to"`
}

// RescaleFigures are what one rescale measured.
type RescaleFigures struct {
	TookMs         float64 `msgpack:"took_ms" json:"took_ms"`
	Moved          int     `msgpack:"moved" json:"moved"`
	Minimum        int     `msgpack:"min" json:"min_moves"`
	Bytes          int64   `msgpack:"bytes" json:"bytes"`
	LongestPauseMs float64 `msgpack:"longest_pause_ms" json:"longest_pause_ms"`
	// Flow is the rescaled operators' throughput and waits around the
	// rescale (nil when not measured).
	Flow *flow.Flow `msgpack:"flow,omitempty" json:"flow,omitempty"`
}

// Planned returns h with e recorded as the newest rescale, keeping the
// latest MaxRecordedRescales.
func (h *RescaleHistory) Planned(e RescaleEntry) *RescaleHistory {
	out := h.clone()
	out.Count++
	out.Recent = append(out.Recent, e)
	if n := len(out.Recent); n > MaxRecordedRescales {
		out.Recent = out.Recent[n-MaxRecordedRescales:]
	}
	return out
}

// Ended returns h with the rescale seq of coordinator ended in state, with
// err's text or figures; h itself when it does not hold that rescale (it
// was never recorded, or has left the history).
func (h *RescaleHistory) Ended(coordinator string, seq uint64, state, errText string, f *RescaleFigures) *RescaleHistory {
	out := h.clone()
	for i := range out.Recent {
		e := &out.Recent[i]
		if e.Seq == seq && e.Coordinator == coordinator && e.State == RescaleRunning {
			e.State, e.Error, e.Figures = state, errText, f
			return out
		}
	}
	return h
}

// Interrupted returns h with every rescale still running under coordinator
// marked interrupted: that coordinator was lost before it recorded the
// outcome.
func (h *RescaleHistory) Interrupted(coordinator string) *RescaleHistory {
	out := h.clone()
	for i := range out.Recent {
		if e := &out.Recent[i]; e.State == RescaleRunning && e.Coordinator == coordinator {
			e.State = RescaleInterrupted
			e.Error = "its coordinator " + coordinator + " was lost before the commit was recorded: the job went on at the parallelisms of its record"
		}
	}
	return out
}

// Latest is the newest recorded rescale (nil: none).
func (h *RescaleHistory) Latest() *RescaleEntry {
	if h == nil || len(h.Recent) == 0 {
		return nil
	}
	return &h.Recent[len(h.Recent)-1]
}

// clone copies h (nil: an empty history) so that a record read once is
// never changed in place.
func (h *RescaleHistory) clone() *RescaleHistory {
	if h == nil {
		return &RescaleHistory{}
	}
	return &RescaleHistory{Count: h.Count, Recent: append([]RescaleEntry(nil), h.Recent...)}
}
