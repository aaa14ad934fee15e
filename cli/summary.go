package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/weirstream/weir"
)

// Summary is the final report of a run, as `node run --json` prints it.
type Summary struct {
	Job         string  `json:"job"`
	Parallelism int     `json:"parallelism"`
	RecordsIn   int64   `json:"records_in"`
	RecordsOut  int64   `json:"records_out"`
	DurationS   float64 `json:"duration_s"`
	RecordsPerS float64 `json:"records_per_s"`
	// LatencyP50Ms and LatencyP99Ms are set when the job measured latency.
	LatencyP50Ms *float64 `json:"latency_p50_ms,omitempty"`
	LatencyP99Ms *float64 `json:"latency_p99_ms,omitempty"`
	// Checkpoints are the checkpoints completed during the run (never null).
	Checkpoints []weir.CheckpointStat `json:"checkpoints"`
	// CheckpointMsP50 and CheckpointMsP95 are set when there were checkpoints.
	CheckpointMsP50 *float64 `json:"checkpoint_ms_p50,omitempty"`
	CheckpointMsP95 *float64 `json:"checkpoint_ms_p95,omitempty"`
	// RestoredFrom is the checkpoint the run resumed from, when it did.
	RestoredFrom uint64 `json:"restored_from,omitempty"`
	// Kills, Failures and Restarts count chaos kills, task failures and region
	// restarts; Recovery* are the times from a failure to the first record
	// processed after its restore (set when there were restarts).
	Kills         int      `json:"kills"`
	Failures      int      `json:"failures"`
	Restarts      int      `json:"restarts"`
	RecoveryMsP50 *float64 `json:"recovery_ms_p50,omitempty"`
	RecoveryMsP95 *float64 `json:"recovery_ms_p95,omitempty"`
	RecoveryMsMax *float64 `json:"recovery_ms_max,omitempty"`
	// Restore is where restored state came from (local copy or checkpoint
	// store), set when tasks restored state.
	Restore *weir.RestoreStat `json:"restore,omitempty"`
	// Rescales are the live rescales of --rescale, in order.
	Rescales []weir.RescaleStat `json:"rescales,omitempty"`
}

// NewSummary summarises a run's result.
func NewSummary(res *weir.Result, parallelism int) Summary {
	s := Summary{
		Job:          res.Job,
		Parallelism:  parallelism,
		RecordsIn:    res.RecordsIn,
		RecordsOut:   res.RecordsOut,
		DurationS:    round(res.Duration.Seconds(), 3),
		RecordsPerS:  round(res.RecordsPerSecond(), 0),
		Checkpoints:  res.Checkpoints,
		RestoredFrom: res.RestoredFrom,
		Kills:        res.Kills,
		Failures:     res.Failures,
		Restarts:     res.Restarts,
		Restore:      res.Restore,
		Rescales:     res.Rescales,
	}
	if len(res.Recovery) > 0 {
		r := make([]float64, len(res.Recovery))
		for i, d := range res.Recovery {
			r[i] = ms(d)
		}
		s.RecoveryMsP50 = ptr(round(Percentile(r, 50), 3))
		s.RecoveryMsP95 = ptr(round(Percentile(r, 95), 3))
		s.RecoveryMsMax = ptr(round(Percentile(r, 100), 3))
	}
	if s.Checkpoints == nil {
		s.Checkpoints = []weir.CheckpointStat{}
	}
	if res.LatencyCount > 0 {
		s.LatencyP50Ms = ptr(ms(res.LatencyP50))
		s.LatencyP99Ms = ptr(ms(res.LatencyP99))
	}
	if len(res.Checkpoints) > 0 {
		d := make([]float64, len(res.Checkpoints))
		for i, c := range res.Checkpoints {
			d[i] = c.DurationMs
			if d[i] == 0 && c.Duration > 0 {
				d[i] = ms(c.Duration)
			}
		}
		s.CheckpointMsP50 = ptr(round(Percentile(d, 50), 3))
		s.CheckpointMsP95 = ptr(round(Percentile(d, 95), 3))
	}
	return s
}

// Percentile is the nearest-rank p-th percentile (0 < p ≤ 100) of values, or 0
// for none. values is not modified.
func Percentile(values []float64, p float64) float64 {
	return weir.Quantile(values, p/100)
}

// WriteJSON writes the summary as one JSON object on one line.
func (s Summary) WriteJSON(w io.Writer) error {
	b, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("encode summary: %w", err)
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// WriteText writes the summary for people.
func (s Summary) WriteText(w io.Writer) error {
	_, err := fmt.Fprintf(w, "%s: %d records in, %d out in %.3fs (%.0f records/s, parallelism %d)\n",
		s.Job, s.RecordsIn, s.RecordsOut, s.DurationS, s.RecordsPerS, s.Parallelism)
	if err == nil && s.RestoredFrom != 0 {
		_, err = fmt.Fprintf(w, "restored from checkpoint %d\n", s.RestoredFrom)
	}
	if err == nil && s.LatencyP50Ms != nil {
		_, err = fmt.Fprintf(w, "latency: p50 %.3f ms, p99 %.3f ms\n", *s.LatencyP50Ms, *s.LatencyP99Ms)
	}
	if err == nil && s.CheckpointMsP50 != nil {
		_, err = fmt.Fprintf(w, "checkpoints: %d completed, duration p50 %.3f ms, p95 %.3f ms\n",
			len(s.Checkpoints), *s.CheckpointMsP50, *s.CheckpointMsP95)
	}
	if err == nil && (s.Failures > 0 || s.Kills > 0) {
		_, err = fmt.Fprintf(w, "failures: %d (%d chaos kills), %d region restarts\n", s.Failures, s.Kills, s.Restarts)
	}
	if err == nil && s.RecoveryMsP50 != nil {
		_, err = fmt.Fprintf(w, "recovery: p50 %.3f ms, p95 %.3f ms, max %.3f ms\n", *s.RecoveryMsP50, *s.RecoveryMsP95, *s.RecoveryMsMax)
	}
	for _, r := range s.Rescales {
		if err != nil {
			break
		}
		if r.Err != "" {
			_, err = fmt.Fprintf(w, "rescale %d: failed: %s\n", r.Step, r.Err)
			continue
		}
		_, err = fmt.Fprintf(w, "rescale %d: %s, took %.3f ms, %d bytes moved, longest pause of a moved group %.3f ms\n",
			r.Step, r.Changes, ms(r.Took), r.Bytes, ms(r.LongestPause))
		if err == nil && r.Flow != nil {
			_, err = fmt.Fprintf(w, "rescale %d: %s\n", r.Step, r.Flow)
		}
	}
	if r := s.Restore; err == nil && r != nil {
		_, err = fmt.Fprintf(w, "restore: %d task restores, %d bytes in %d sections local, %d bytes in %d sections remote, %.3f ms until running, %.3f ms until every key group was decoded\n",
			r.Tasks, r.LocalBytes, r.LocalSections, r.RemoteBytes, r.RemoteSections, r.TookMs, r.DecodedMs)
	}
	return err
}

// ms is d in milliseconds, rounded to the microsecond.
func ms(d time.Duration) float64 { return round(float64(d)/float64(time.Millisecond), 3) }

// round rounds x to digits decimals.
func round(x float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(x*p) / p
}

func ptr[T any](v T) *T { return &v }
