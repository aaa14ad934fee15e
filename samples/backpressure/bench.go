package backpressure

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/rs/zerolog"

	"github.com/weirstream/weir"
)

// BenchConfig sizes the FLIP-76 experiment.
type BenchConfig struct {
	Parallelism int
	SleepsMs    []float64
	Modes       []weir.CheckpointMode
	Repetitions int
	// Cell is how long each run lasts.
	Cell time.Duration
	// Interval is the checkpoint interval.
	Interval time.Duration
	// StateDir holds the runs' checkpoints (a fresh subdirectory per run).
	StateDir string
	Runtime  weir.RuntimeOptions
	// Progress, if set, is told about every finished run.
	Progress func(run BenchRun)
}

// DefaultBenchConfig is the seed's experiment: sleeps 0, 0.01 and 0.1 ms, modes
// none, aligned and unaligned, checkpoints every second, three repetitions.
func DefaultBenchConfig() BenchConfig {
	return BenchConfig{Parallelism: 2, SleepsMs: []float64{0, 0.01, 0.1},
		Modes:       []weir.CheckpointMode{weir.CheckpointNone, weir.CheckpointAligned, weir.CheckpointUnaligned},
		Repetitions: 3, Cell: 7 * time.Second, Interval: time.Second}
}

// BenchRun is one run of one cell.
type BenchRun struct {
	SleepMs       float64
	Mode          weir.CheckpointMode
	Repetition    int
	RecordsPerS   float64
	Checkpoints   int
	CheckpointP50 float64 // ms
	CheckpointP95 float64 // ms
	InflightP50   float64 // bytes of channel state written
	// InflightRefP50 is bytes of channel state referred to in earlier
	// checkpoints' blobs (buffers still queued) instead of written.
	InflightRefP50 float64
}

// BenchRow is one cell: the median over repetitions.
type BenchRow struct {
	SleepMs          float64 `json:"sleep_ms"`
	Mode             string  `json:"mode"`
	RecordsPerS      float64 `json:"records_per_s"`
	CheckpointMsP50  float64 `json:"checkpoint_ms_p50"`
	CheckpointMsP95  float64 `json:"checkpoint_ms_p95"`
	InflightBytesP50 float64 `json:"inflight_bytes_p50"`
	// InflightRefBytesP50: channel state referred to, not written again.
	InflightRefBytesP50 float64 `json:"inflight_ref_bytes_p50"`
	Checkpoints         int     `json:"checkpoints"`
}

// RunBench runs every cell Repetitions times and reports the medians.
func RunBench(ctx context.Context, cfg BenchConfig) ([]BenchRow, error) {
	if cfg.Repetitions < 1 || cfg.Cell <= 0 || cfg.Parallelism < 1 {
		return nil, fmt.Errorf("bench: repetitions %d, cell %v and parallelism %d must be positive", cfg.Repetitions, cfg.Cell, cfg.Parallelism)
	}
	base := cfg.StateDir
	if base == "" {
		d, err := os.MkdirTemp("", "weir-bench-")
		if err != nil {
			return nil, fmt.Errorf("bench state dir: %w", err)
		}
		defer os.RemoveAll(d)
		base = d
	}
	var rows []BenchRow
	for _, sleep := range cfg.SleepsMs {
		for _, mode := range cfg.Modes {
			var runs []BenchRun
			for rep := 0; rep < cfg.Repetitions; rep++ {
				dir := filepath.Join(base, fmt.Sprintf("s%v-%s-%d", sleep, mode, rep))
				r, err := benchRun(ctx, cfg, sleep, mode, dir)
				if err != nil {
					return rows, fmt.Errorf("bench sleep %v ms, mode %s, repetition %d: %w", sleep, mode, rep+1, err)
				}
				r.Repetition = rep + 1
				os.RemoveAll(dir)
				if cfg.Progress != nil {
					cfg.Progress(r)
				}
				runs = append(runs, r)
			}
			rows = append(rows, medianRow(sleep, mode, runs))
		}
	}
	return rows, nil
}

// benchRun runs one cell once, unbounded for cfg.Cell.
func benchRun(ctx context.Context, cfg BenchConfig, sleep float64, mode weir.CheckpointMode, dir string) (BenchRun, error) {
	g, err := Build(Config{Records: weir.Unbounded, Parallelism: cfg.Parallelism, SleepMs: sleep})
	if err != nil {
		return BenchRun{}, err
	}
	res, err := weir.Run(ctx, g, weir.WithDuration(cfg.Cell), weir.WithRuntime(cfg.Runtime),
		weir.WithLogger(zerolog.Nop()),
		weir.WithCheckpoints(weir.CheckpointConfig{Mode: mode, Interval: cfg.Interval, StateDir: dir, Retain: 2}))
	if err != nil {
		return BenchRun{}, err
	}
	r := BenchRun{SleepMs: sleep, Mode: mode, RecordsPerS: res.RecordsPerSecond()}
	var durs, inflight, refs []float64
	for _, c := range res.Checkpoints {
		if c.Final {
			continue // the end-of-input checkpoint is aligned by design
		}
		durs = append(durs, c.DurationMs)
		inflight = append(inflight, float64(c.InflightBytes))
		refs = append(refs, float64(c.InflightRefBytes))
	}
	r.Checkpoints = len(durs)
	r.CheckpointP50, r.CheckpointP95 = weir.Quantile(durs, 0.5), weir.Quantile(durs, 0.95)
	r.InflightP50, r.InflightRefP50 = weir.Quantile(inflight, 0.5), weir.Quantile(refs, 0.5)
	return r, nil
}

// medianRow takes each figure's median over the repetitions.
func medianRow(sleep float64, mode weir.CheckpointMode, runs []BenchRun) BenchRow {
	pick := func(f func(BenchRun) float64) float64 {
		v := make([]float64, len(runs))
		for i, r := range runs {
			v[i] = f(r)
		}
		return weir.Quantile(v, 0.5)
	}
	return BenchRow{SleepMs: sleep, Mode: string(mode),
		RecordsPerS:         pick(func(r BenchRun) float64 { return r.RecordsPerS }),
		CheckpointMsP50:     pick(func(r BenchRun) float64 { return r.CheckpointP50 }),
		CheckpointMsP95:     pick(func(r BenchRun) float64 { return r.CheckpointP95 }),
		InflightBytesP50:    pick(func(r BenchRun) float64 { return r.InflightP50 }),
		InflightRefBytesP50: pick(func(r BenchRun) float64 { return r.InflightRefP50 }),
		Checkpoints:         int(pick(func(r BenchRun) float64 { return float64(r.Checkpoints) })),
	}
}
