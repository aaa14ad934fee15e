package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/actors"
	"github.com/weirstream/weir/cli"
	"github.com/weirstream/weir/keygroups"
	"github.com/weirstream/weir/samples/bigstate"
)

// stateBenchConfig is `node bench state`.
type stateBenchConfig struct {
	keys        int
	valueBytes  int
	measure     time.Duration
	minCkpts    int
	interval    time.Duration
	mode        weir.CheckpointMode
	changing    []float64 // percent of keys updated between checkpoints
	cells       []stateCell
	rateShare   float64       // paced runs: this share of the cell's throughput without checkpoints
	pacedRate   float64       // paced runs: at this many records/s instead, when above 0
	rounds      int           // every cell runs this many times, in turn; rows give medians
	holdPairs   int           // after the window, held and on phases in turn (alternateHeld)
	holdPhase   time.Duration // the length of each
	stateDir    string
	directIO    bool
	hotOrder    string // hotShuffled or hotSequential
	progressOut io.Writer
}

// stateCell is one checkpoint configuration of the bench.
type stateCell struct {
	Name  string `json:"cell"`
	None  bool   `json:"-"` // no checkpoints
	Async bool   `json:"async"`
	Incr  bool   `json:"incremental"`
}

// stateBenchRow is the figures of one cell at one share of changing keys.
type stateBenchRow struct {
	stateCell
	ChangingPct float64 `json:"changing_pct"`
	Rounds      int     `json:"rounds"`
	RecordsPerS float64 `json:"records_per_s"`
	VsNonePct   float64 `json:"throughput_vs_none_pct"`
	PacedRate   float64 `json:"paced_records_per_s"`
	// PacedKeptPct is the share of the paced rate the paced run achieved:
	// below 100 the job (or the machine) could not keep up, and its p99
	// counts the backlog.
	PacedKeptPct float64 `json:"paced_kept_pct"`
	P99Ms        float64 `json:"p99_ms"`
	P99VsNone    float64 `json:"p99_vs_none"`
	// VsHeldPct is the throughput with checkpoints against the same job
	// with its checkpoints held, phase by phase in the same process (the
	// median over the phase pairs); P99VsHeld is the paced run's p99 in
	// its on phases against its held phases. Runs taken one after another
	// differ by more than checkpoints cost, so these are the sharper
	// comparison; vs none also counts the cost of a job that can take
	// checkpoints at all (incremental checkpoints' change marks).
	VsHeldPct float64 `json:"throughput_vs_held_pct,omitempty"`
	P99VsHeld float64 `json:"p99_vs_held,omitempty"`
	// Where the on phases' time went (onSplit), sampled: the share of it
	// spent while a task encoded a snapshot and while a blob was stored
	// after that, and the throughput in each part and in the rest of the
	// on phases against the held phases'.
	EncodingSharePct  float64 `json:"on_encoding_share_pct,omitempty"`
	EncodingVsHeldPct float64 `json:"on_encoding_vs_held_pct,omitempty"`
	StoringSharePct   float64 `json:"on_storing_share_pct,omitempty"`
	StoringVsHeldPct  float64 `json:"on_storing_vs_held_pct,omitempty"`
	OtherVsHeldPct    float64 `json:"on_other_vs_held_pct,omitempty"`
	Checkpoints       int     `json:"checkpoints"`
	CkptP50Ms         float64 `json:"checkpoint_p50_ms"`
	CkptMaxMs         float64 `json:"checkpoint_max_ms"`
	BytesPerCkpt      float64 `json:"bytes_per_checkpoint"`
	FullStateBytes    int64   `json:"full_state_bytes"`
	BytesOfFullPct    float64 `json:"bytes_of_full_state_pct"`
	MaxBarrierStall   float64 `json:"max_barrier_stall_ms"`
	MaxCOWWaitMs      float64 `json:"max_copy_on_write_wait_ms"`
	// GroupsChangedPct is the share of key groups holding a key of the hot
	// set: what a checkpoint that writes only changed key groups would
	// still write, next to ChangingPct for one that writes changed keys.
	GroupsChangedPct float64 `json:"groups_changed_pct"`
	// CoresBusy is how many cores were busy on average in each part of
	// the held and on phases of the throughput and the paced run, with
	// this process's work and with anything's (coresProgress).
	CoresBusy *coresOfRuns `json:"cores_busy,omitempty"`
}

// runStateBench runs a keycount-like job over large keyed state with
// checkpoints every --checkpoint-interval, in every cell and share of
// changing keys, and prints one row each.
func runStateBench(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg := stateBenchConfig{progressOut: stderr, mode: weir.CheckpointUnaligned}
	fs := flag.NewFlagSet("node bench state", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&cfg.keys, "keys", 1_000_000, "distinct keys, all filled before measuring")
	fs.IntVar(&cfg.valueBytes, "value-bytes", 256, "bytes of keyed state per key")
	fs.DurationVar(&cfg.measure, "duration", 10*time.Second, "measured time of each run, after the state is filled")
	fs.IntVar(&cfg.minCkpts, "min-checkpoints", 1, "a run that takes checkpoints goes on measuring past --duration until this many completed while measuring")
	fs.DurationVar(&cfg.interval, "checkpoint-interval", time.Second, "time between checkpoints")
	mode := fs.String("checkpoint-mode", string(cfg.mode), "aligned or unaligned")
	changing := fs.String("changing", "1,100", "comma-separated percentages of keys updated between checkpoints (the hot set)")
	cells := fs.String("cells", "none,async,incr,sync", "comma-separated cells: none (no checkpoints), async (copy-on-write view at the barrier, every checkpoint written whole), incr (async, and key groups written as deltas of their changed keys), sync (encoded on the task at the barrier)")
	fs.Float64Var(&cfg.rateShare, "paced-share", 0.5, "latency runs are paced at this share of the throughput without checkpoints")
	fs.Float64Var(&cfg.pacedRate, "paced-rate", 0, "latency runs are paced at this many records/s instead of --paced-share's (to compare builds at the same load); 0: use --paced-share")
	fs.IntVar(&cfg.rounds, "rounds", 1, "runs of every cell, taken in turn (none, async, …, none, async, …); each row gives the medians, its ratios to none taken within each round")
	fs.IntVar(&cfg.holdPairs, "hold-pairs", 3, "after each checkpointing run's window, this many pairs of phases with the job's checkpoints held and going on, compared in the same process (vs held); 0: none")
	fs.DurationVar(&cfg.holdPhase, "hold-phase", 3*time.Second, "the length of each held and each on phase")
	fs.StringVar(&cfg.stateDir, "state-dir", "", "where the runs keep checkpoints (default: a temporary directory)")
	fs.StringVar(&cfg.hotOrder, "hot-order", hotShuffled, "which keys are hot and the order records visit them: shuffled (the first of a fixed shuffle of all keys, visited in that order) or sequential (every n-th key, in key order: a sweep through memory in the order the fill allocated the values)")
	fs.BoolVar(&cfg.directIO, "checkpoint-direct-io", false, "write checkpoint blobs past the page cache, as node run's --checkpoint-direct-io")
	asJSON := fs.Bool("json", false, "print the rows as a JSON list instead of a table")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of all the runs to `FILE`")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return cli.ExitOK
		}
		return cli.ExitUsage
	}
	if err := cfg.finish(fs, *mode, *changing, *cells); err != nil {
		fmt.Fprintf(stderr, "node bench state: %v\n", err)
		return cli.ExitUsage
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fmt.Fprintf(stderr, "node bench state: %v\n", err)
			return cli.ExitFailure
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintf(stderr, "node bench state: %v\n", err)
			return cli.ExitFailure
		}
		defer pprof.StopCPUProfile()
	}
	rows, err := stateBench(ctx, cfg)
	if err != nil {
		fmt.Fprintf(stderr, "node bench state: %v\n", err)
		return cli.ExitFailure
	}
	if *asJSON {
		if err := json.NewEncoder(stdout).Encode(rows); err != nil {
			fmt.Fprintf(stderr, "node bench state: %v\n", err)
			return cli.ExitFailure
		}
		return cli.ExitOK
	}
	printStateBench(stdout, rows)
	return cli.ExitOK
}

// finish checks the flags and fills the lists they name.
func (c *stateBenchConfig) finish(fs *flag.FlagSet, mode, changing, cells string) error {
	switch {
	case fs.NArg() > 0:
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	case c.keys < 1 || c.valueBytes < 1:
		return fmt.Errorf("--keys %d and --value-bytes %d must be at least 1", c.keys, c.valueBytes)
	case c.measure < 100*time.Millisecond:
		return fmt.Errorf("--duration %v must be at least 100ms", c.measure)
	case c.interval < 10*time.Millisecond:
		return fmt.Errorf("--checkpoint-interval %v must be at least 10ms", c.interval)
	case c.minCkpts < 0 || c.minCkpts > 1000:
		return fmt.Errorf("--min-checkpoints %d must be in [0, 1000]", c.minCkpts)
	case c.rateShare <= 0 || c.rateShare > 1:
		return fmt.Errorf("--paced-share %v must be in (0, 1]", c.rateShare)
	case c.pacedRate < 0 || c.pacedRate > 1e9:
		return fmt.Errorf("--paced-rate %v must be in [0, 1e9] records/s", c.pacedRate)
	case c.rounds < 1 || c.rounds > 100:
		return fmt.Errorf("--rounds %d must be in [1, 100]", c.rounds)
	case c.holdPairs < 0 || c.holdPairs > 100:
		return fmt.Errorf("--hold-pairs %d must be in [0, 100]", c.holdPairs)
	case c.holdPhase < c.interval || c.holdPhase > time.Hour:
		return fmt.Errorf("--hold-phase %v must be in [--checkpoint-interval (%v), 1h]", c.holdPhase, c.interval)
	case c.hotOrder != hotShuffled && c.hotOrder != hotSequential:
		return fmt.Errorf("--hot-order %q: want %s or %s", c.hotOrder, hotShuffled, hotSequential)
	}
	m, err := weir.ParseCheckpointMode(mode)
	if err != nil || m == weir.CheckpointNone {
		return fmt.Errorf("--checkpoint-mode %q: want aligned or unaligned", mode)
	}
	c.mode = m
	for _, p := range strings.Split(changing, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || v <= 0 || v > 100 {
			return fmt.Errorf("--changing: %q is not a percentage in (0, 100]", p)
		}
		c.changing = append(c.changing, v)
	}
	for _, name := range strings.Split(cells, ",") {
		switch name = strings.TrimSpace(name); name {
		case "none":
			c.cells = append(c.cells, stateCell{Name: name, None: true})
		case "async":
			c.cells = append(c.cells, stateCell{Name: name, Async: true})
		case "incr":
			c.cells = append(c.cells, stateCell{Name: name, Async: true, Incr: true})
		case "sync":
			c.cells = append(c.cells, stateCell{Name: name})
		default:
			return fmt.Errorf("--cells: unknown cell %q (want none, async, incr or sync)", name)
		}
	}
	return nil
}

// stateBench runs every cell at every share of changing keys, --rounds
// times in turn: once as fast as it goes (throughput, checkpoints), once
// paced (latency). Each row gives the medians over the rounds.
func stateBench(ctx context.Context, cfg stateBenchConfig) ([]stateBenchRow, error) {
	var rows []stateBenchRow
	for _, pct := range cfg.changing {
		rounds := make([][]stateBenchRow, 0, cfg.rounds)
		for round := range cfg.rounds {
			r, err := stateBenchRound(ctx, cfg, pct, round)
			if err != nil {
				return nil, err
			}
			rounds = append(rounds, r)
		}
		rows = append(rows, mergeStateRounds(rounds)...)
	}
	return rows, nil
}

// stateBenchRound runs every cell once at pct % changing, and sets each
// row's ratios to the none cell of the same round.
func stateBenchRound(ctx context.Context, cfg stateBenchConfig, pct float64, round int) ([]stateBenchRow, error) {
	var rows []stateBenchRow
	var none *stateBenchRow
	groupsChanged := changedGroupsPct(cfg.keys, pct, cfg.hotOrder == hotShuffled)
	for _, cell := range cfg.cells {
		row := stateBenchRow{stateCell: cell, ChangingPct: pct, Rounds: 1, GroupsChangedPct: groupsChanged}
		fast, err := stateBenchRun(ctx, cfg, cell, pct, 0)
		if err != nil {
			return nil, fmt.Errorf("cell %s, %v %% changing: %w", cell.Name, pct, err)
		}
		row.RecordsPerS = fast.rate
		row.VsHeldPct = vsHeld(fast.held)
		row.fillSplit(fast.split)
		row.fillCheckpoints(fast)
		rate := fast.rate * cfg.rateShare
		if none != nil {
			rate = none.RecordsPerS * cfg.rateShare
		}
		if cfg.pacedRate > 0 {
			rate = cfg.pacedRate
		}
		paced, err := stateBenchRun(ctx, cfg, cell, pct, rate)
		if err != nil {
			return nil, fmt.Errorf("cell %s, %v %% changing, paced: %w", cell.Name, pct, err)
		}
		row.PacedRate, row.P99Ms = rate, ms(paced.p99)
		if paced.p99Held > 0 {
			row.P99VsHeld = float64(paced.p99On) / float64(paced.p99Held)
		}
		row.PacedKeptPct = 100 * paced.rate / rate
		row.fillCores(fast.split, paced.split)
		fmt.Fprintf(cfg.progressOut, "bench state  round %d/%d  %-5s %5v %% changing: %.0f records/s, p99 %.2f ms at %.0f records/s, %d checkpoints, %.0f bytes each, stall %.2f ms%s\n",
			round+1, cfg.rounds, cell.Name, pct, row.RecordsPerS, row.P99Ms, rate, row.Checkpoints, row.BytesPerCkpt, row.MaxBarrierStall, heldProgress(fast.held, paced)+splitProgress(fast.split)+coresProgress("fast", fast.split)+coresProgress("paced", paced.split))
		rows = append(rows, row)
		if cell.None && none == nil {
			none = &rows[len(rows)-1]
		}
	}
	var full int64
	for _, r := range rows {
		full = max(full, r.FullStateBytes)
	}
	for i := range rows {
		r := &rows[i]
		r.FullStateBytes = full
		if full > 0 && r.Checkpoints > 0 {
			r.BytesOfFullPct = 100 * r.BytesPerCkpt / float64(full)
		}
		if none != nil && none.RecordsPerS > 0 {
			r.VsNonePct = 100 * (r.RecordsPerS / none.RecordsPerS) // exactly 100 for the none row itself
		}
		if none != nil && none.P99Ms > 0 {
			r.P99VsNone = r.P99Ms / none.P99Ms
		}
	}
	return rows, nil
}

// mergeStateRounds turns the rows of several rounds, each with the same
// cells in the same order, into one row per cell: the median of each
// figure, ratios to none included (each taken within its round, so a
// machine that is slower in one round than in the next skews them less),
// the longest of the maxima, and the checkpoints of every round.
func mergeStateRounds(rounds [][]stateBenchRow) []stateBenchRow {
	if len(rounds) == 0 {
		return nil
	}
	out := make([]stateBenchRow, len(rounds[0]))
	for i := range out {
		var all []stateBenchRow
		for _, r := range rounds {
			all = append(all, r[i])
		}
		med := func(f func(stateBenchRow) float64) float64 {
			v := make([]float64, len(all))
			for j, r := range all {
				v[j] = f(r)
			}
			return median(v)
		}
		m := all[0]
		m.Rounds = len(all)
		m.RecordsPerS = med(func(r stateBenchRow) float64 { return r.RecordsPerS })
		m.VsNonePct = med(func(r stateBenchRow) float64 { return r.VsNonePct })
		m.PacedRate = med(func(r stateBenchRow) float64 { return r.PacedRate })
		m.PacedKeptPct = med(func(r stateBenchRow) float64 { return r.PacedKeptPct })
		m.P99Ms = med(func(r stateBenchRow) float64 { return r.P99Ms })
		m.P99VsNone = med(func(r stateBenchRow) float64 { return r.P99VsNone })
		m.VsHeldPct = med(func(r stateBenchRow) float64 { return r.VsHeldPct })
		m.P99VsHeld = med(func(r stateBenchRow) float64 { return r.P99VsHeld })
		m.EncodingSharePct = med(func(r stateBenchRow) float64 { return r.EncodingSharePct })
		m.EncodingVsHeldPct = med(func(r stateBenchRow) float64 { return r.EncodingVsHeldPct })
		m.StoringSharePct = med(func(r stateBenchRow) float64 { return r.StoringSharePct })
		m.StoringVsHeldPct = med(func(r stateBenchRow) float64 { return r.StoringVsHeldPct })
		m.OtherVsHeldPct = med(func(r stateBenchRow) float64 { return r.OtherVsHeldPct })
		m.CoresBusy = mergeCores(all)
		m.CkptP50Ms = med(func(r stateBenchRow) float64 { return r.CkptP50Ms })
		m.BytesPerCkpt = med(func(r stateBenchRow) float64 { return r.BytesPerCkpt })
		m.BytesOfFullPct = med(func(r stateBenchRow) float64 { return r.BytesOfFullPct })
		m.Checkpoints = 0
		for _, r := range all {
			m.Checkpoints += r.Checkpoints
			m.CkptMaxMs = max(m.CkptMaxMs, r.CkptMaxMs)
			m.FullStateBytes = max(m.FullStateBytes, r.FullStateBytes)
			m.MaxBarrierStall = max(m.MaxBarrierStall, r.MaxBarrierStall)
			m.MaxCOWWaitMs = max(m.MaxCOWWaitMs, r.MaxCOWWaitMs)
		}
		out[i] = m
	}
	return out
}

// triggeredAfter reports whether one of the checkpoints was triggered after t.
func triggeredAfter(cks []actors.CheckpointStat, t time.Time) bool {
	for _, c := range cks {
		if c.Completed.Add(-c.Duration).After(t) {
			return true
		}
	}
	return false
}

// fillCheckpoints takes the checkpoint figures of a run.
func (r *stateBenchRow) fillCheckpoints(run stateRun) {
	r.Checkpoints = len(run.checkpoints)
	r.MaxBarrierStall, r.MaxCOWWaitMs = ms(run.maxPause), ms(run.maxWait)
	r.FullStateBytes = run.largest
	if len(run.checkpoints) == 0 {
		return
	}
	durs := make([]float64, len(run.checkpoints))
	var bytes int64
	for i, c := range run.checkpoints {
		durs[i] = c.DurationMs
		bytes += c.StateWrittenBytes
		r.CkptMaxMs = max(r.CkptMaxMs, c.DurationMs)
		r.FullStateBytes = max(r.FullStateBytes, c.StateWrittenBytes)
	}
	r.CkptP50Ms = median(durs)
	r.BytesPerCkpt = float64(bytes) / float64(len(run.checkpoints))
}

// hotKeys returns the names of all keys and the hot set at pct %, in the
// order the source visits it: pct % of the keys, with shuffled the first
// of a shuffle of all of them with a fixed seed (at 100 % every key in a
// random order), otherwise every n-th key in key order (at 100 % a sweep
// through the keys in the order the fill allocated their values, which the
// processor's prefetching follows; at 1 % values at an even step through
// memory).
func hotKeys(keys int, pct float64, shuffled bool) (names, hot []string) {
	names = make([]string, keys)
	for i := range names {
		names[i] = "k" + strconv.Itoa(i)
	}
	hot = make([]string, max(1, int(float64(keys)*pct/100)))
	stride := keys / len(hot)
	var order []int
	if shuffled {
		order = rand.New(rand.NewPCG(hotSeed, hotSeed)).Perm(keys)
	}
	for j := range hot {
		if shuffled {
			hot[j] = names[order[j]]
		} else {
			hot[j] = names[j*stride]
		}
	}
	return names, hot
}

// The orders of --hot-order.
const (
	hotShuffled   = "shuffled"
	hotSequential = "sequential"
)

// hotSeed seeds hotKeys' shuffle: every run and build visits the same keys.
const hotSeed = 18

// changedGroupsPct is the share of the job's key groups that hold a key of
// the hot set at pct %.
func changedGroupsPct(keys int, pct float64, shuffled bool) float64 {
	_, hot := hotKeys(keys, pct, shuffled)
	div := keygroups.NewDivisor(keygroups.DefaultMaxParallelism)
	changed := map[uint32]bool{}
	for _, key := range hot {
		changed[div.Mod(keygroups.HashKey(key))] = true
	}
	return 100 * float64(len(changed)) / keygroups.DefaultMaxParallelism
}

// stateRun is what one run measured after the state was filled.
type stateRun struct {
	rate              float64
	p99               time.Duration
	checkpoints       []weir.CheckpointStat // completed while measuring
	largest           int64                 // state bytes of the largest checkpoint of the run, before the window too
	maxPause, maxWait time.Duration
	// After the window (checkpointing cells): the phases with the job's
	// checkpoints held and on, and the paced run's p99 in each.
	held           []heldPair
	split          onSplit // where the time of the held and on phases went
	p99On, p99Held time.Duration
}

// stateEvent is one record of the bench: a key and when it was generated.
type stateEvent struct {
	Key string `msgpack:"k"`
	At  int64  `msgpack:"t"` // unix ns
}

// stateShared is what the bench's source, task and driver share, each on
// cache lines of its own: the task adds to processed at every record, and
// a line it shared with what the source or another goroutine writes would
// bounce between the cores at every record, by more or less as the heap
// happens to place them.
type stateShared struct {
	_ [cacheLines]byte
	// The window: records due from windowStart on are measured.
	windowStart atomic.Int64
	_           [cacheLines - 8]byte
	// repace makes the paced source count its schedule from the window's
	// start (what fell behind before it is not owed).
	repace atomic.Bool
	_      [cacheLines - 1]byte
	// processed counts the records the task processed.
	processed atomic.Int64
	_         [cacheLines - 8]byte
	// phase is the run's phase after the window (alternateHeld).
	phase atomic.Int32
	_     [cacheLines - 4]byte
}

// cacheLines is the padding that keeps stateShared's fields apart: two
// 64-byte lines, which the processor may fetch in pairs.
const cacheLines = 128

// stateBenchRun fills cfg.keys keys, then updates a hot set of pct % of them
// for cfg.measure, as fast as it goes (rate 0) or paced at rate records/s.
func stateBenchRun(ctx context.Context, cfg stateBenchConfig, cell stateCell, pct, rate float64) (stateRun, error) {
	var out stateRun
	keys, hot := hotKeys(cfg.keys, pct, cfg.hotOrder == hotShuffled)
	k := int64(cfg.keys)
	sh := new(stateShared)
	windowStart, repace, processed := &sh.windowStart, &sh.repace, &sh.processed
	windowStart.Store(math.MaxInt64)
	pace := statePacer{rate: rate}
	g := weir.NewGraph("benchstate")
	events := weir.Generate(g, "source", weir.Unbounded, func(i int64) stateEvent {
		if i < k {
			return stateEvent{Key: keys[i]}
		}
		key := hot[int(i-k)%len(hot)]
		if rate == 0 {
			// Throughput only: no latency is measured, so no clock is read.
			return stateEvent{Key: key}
		}
		now := time.Now()
		if repace.CompareAndSwap(true, false) {
			pace.reanchor()
		}
		due := pace.due(i, now)
		if due.Sub(now) > time.Millisecond {
			time.Sleep(due.Sub(now))
			now = time.Now()
		}
		return stateEvent{Key: key, At: latencyStart(due, now).UnixNano()}
	})
	values := weir.NewValueState[bigstate.Entry](g, "value")
	lat, latOn, latHeld := weir.NewHistogram(), weir.NewHistogram(), weir.NewHistogram()
	n := cfg.valueBytes
	weir.ToSink(weir.Process(weir.KeyBy(events, func(e stateEvent) string { return e.Key }), "fill",
		func(ctx *weir.KeyedContext[string], e stateEvent, _ *weir.Emitter[struct{}]) error {
			s := values.Get(ctx)
			if s.Value == nil {
				s.Value = bigstate.InitialValue(e.Key, n)
			}
			s.Count++
			bigstate.Update(s.Value, s.Count)
			values.Set(ctx, s)
			if e.At != 0 && e.At >= windowStart.Load() {
				d := time.Since(time.Unix(0, e.At))
				switch sh.phase.Load() {
				case phaseHeld:
					latHeld.Observe(d)
				case phaseOn:
					latOn.Observe(d)
				default:
					lat.Observe(d)
				}
			}
			processed.Add(1)
			return nil
		}, weir.WithState(values)), "sink", weir.DiscardSink[struct{}](nil))

	dir := cfg.stateDir
	if dir == "" {
		d, err := os.MkdirTemp("", "weir-bench-state-")
		if err != nil {
			return out, err
		}
		defer os.RemoveAll(d)
		dir = d
	} else {
		dir = fmt.Sprintf("%s/%s-%v-%v", dir, cell.Name, pct, rate > 0)
	}
	cp := weir.CheckpointConfig{Mode: cfg.mode, Interval: cfg.interval, Timeout: time.Minute, Retain: 2, StateDir: dir, SyncSnapshots: !cell.Async,
		FullCheckpoints: !cell.Incr, DirectWrites: cfg.directIO}
	if cell.None {
		cp = weir.CheckpointConfig{Mode: weir.CheckpointNone, StateDir: dir}
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	jobs := make(chan *actors.Job, 1)
	type result struct {
		res *weir.Result
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := weir.Run(runCtx, g, weir.WithCheckpoints(cp), weir.WithJobObserver(func(j *actors.Job) { jobs <- j }))
		done <- result{res, err}
	}()
	var job *actors.Job
	select {
	case job = <-jobs:
	case r := <-done:
		return out, fmt.Errorf("run ended before it started: %v", r.err)
	}
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for processed.Load() < k {
		select {
		case <-tick.C:
		case r := <-done:
			return out, fmt.Errorf("run ended while filling: %v", r.err)
		case <-ctx.Done():
			return out, ctx.Err()
		}
	}
	// The window starts once a checkpoint triggered after the fill
	// completed: the fill changed every key, so the one that holds its end
	// writes the whole state in every cell, incremental too.
	filled := time.Now()
	for !cell.None && !triggeredAfter(job.Checkpoints(), filled) {
		select {
		case <-tick.C:
		case r := <-done:
			return out, fmt.Errorf("run ended after filling: %v", r.err)
		case <-ctx.Done():
			return out, ctx.Err()
		}
	}
	// Latency, stalls and waits are those of the window only: before it,
	// the fill and the checkpoint that wrote it whole. Their garbage is
	// collected first, in every cell alike, so that the window does not
	// pay for it.
	runtime.GC()
	job.Metrics.MaxSnapshotPauseNs.Store(0)
	job.Metrics.MaxSnapshotWaitNs.Store(0)
	repace.Store(true)
	c1, t1, n1 := processed.Load(), time.Now(), len(job.Checkpoints())
	windowStart.Store(t1.UnixNano())
	select {
	case <-time.After(cfg.measure):
	case r := <-done:
		return out, fmt.Errorf("run ended while measuring: %v", r.err)
	case <-ctx.Done():
		return out, ctx.Err()
	}
	for !cell.None && len(job.Checkpoints())-n1 < cfg.minCkpts {
		select {
		case <-tick.C:
		case r := <-done:
			return out, fmt.Errorf("run ended while measuring: %v", r.err)
		case <-ctx.Done():
			return out, ctx.Err()
		}
	}
	c2, t2 := processed.Load(), time.Now()
	all := job.Checkpoints()
	out.rate = float64(c2-c1) / t2.Sub(t1).Seconds()
	out.p99 = lat.Quantile(0.99)
	out.maxPause = time.Duration(job.Metrics.MaxSnapshotPauseNs.Load())
	out.maxWait = time.Duration(job.Metrics.MaxSnapshotWaitNs.Load())
	for _, c := range all {
		out.largest = max(out.largest, c.StateBytes) // the fill's whole one too
	}
	for _, c := range all[min(n1, len(all)):] {
		out.checkpoints = append(out.checkpoints, weir.CheckpointStat{ID: c.ID, DurationMs: ms(c.Duration), StateWrittenBytes: c.StateWrittenBytes})
	}
	if !cell.None && cfg.holdPairs > 0 {
		pairs, split, err := alternateHeld(ctx, cfg, job, sh)
		if err != nil {
			return out, fmt.Errorf("held and on phases: %w", err)
		}
		out.held, out.split = pairs, split
		out.p99On, out.p99Held = latOn.Quantile(0.99), latHeld.Quantile(0.99)
	}
	cancel()
	if r := <-done; r.err != nil && !errors.Is(r.err, context.Canceled) {
		return out, r.err
	}
	return out, nil
}

// ms is d in milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// printStateBench prints one line per cell and share of changing keys.
func printStateBench(w io.Writer, rows []stateBenchRow) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "cell\tchanging %\trounds\tgroups changed %\trecords/s\tvs none %\tvs held %\tpaced kept %\tp99 ms (paced)\tp99 vs none\tp99 vs held\tckpts\tckpt p50 ms\tckpt max ms\tbytes/ckpt\t% of full\tmax stall ms\tmax cow wait ms\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%v\t%d\t%.1f\t%.0f\t%.1f\t%s\t%.1f\t%.2f\t%.2f\t%s\t%d\t%.1f\t%.1f\t%.0f\t%.1f\t%.2f\t%.2f\t\n", r.Name, r.ChangingPct, r.Rounds, r.GroupsChangedPct, r.RecordsPerS, r.VsNonePct, orDash(r.VsHeldPct, "%.1f"),
			r.PacedKeptPct, r.P99Ms, r.P99VsNone, orDash(r.P99VsHeld, "%.2f"), r.Checkpoints, r.CkptP50Ms, r.CkptMaxMs, r.BytesPerCkpt, r.BytesOfFullPct, r.MaxBarrierStall, r.MaxCOWWaitMs)
	}
	tw.Flush()
}

// orDash formats v, or "-" when it is 0 (a figure the row has not: none
// has no checkpoints to hold).
func orDash(v float64, format string) string {
	if v == 0 {
		return "-"
	}
	return fmt.Sprintf(format, v)
}
