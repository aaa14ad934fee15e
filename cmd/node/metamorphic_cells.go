package main

import (
	"fmt"
	"hash/fnv"
	"math/rand"
	"strings"
)

// The dimensions of the metamorphic check: every cell runs the same job on
// the same input and must commit the same output.
var (
	metaJobs         = []string{"keycount", "keysum"}
	metaModes        = []string{"none", "aligned", "aligned-1ms", "unaligned", "unaligned-c2-4KiB", "aligned-incr", "unaligned-incr-c2"}
	metaParallelisms = []int{1, 2, 4}
	metaDisturbances = []string{"no-chaos", "actor-kills", "kill-restore-latest", "kill-restore-older"}
	metaModeArgs     = map[string][]string{
		// The cells without -incr write every key group whole at every
		// checkpoint (incremental checkpoints are node run's default).
		"none":        {"--checkpoint-mode", "none"},
		"aligned":     {"--checkpoint-mode", "aligned", "--checkpoint-incremental=false"},
		"aligned-1ms": {"--checkpoint-mode", "aligned", "--aligned-timeout", "1ms", "--checkpoint-incremental=false"},
		"unaligned":   {"--checkpoint-mode", "unaligned", "--checkpoint-incremental=false"},
		// Two checkpoints in flight and a size limit over which barriers fall back to alignment.
		"unaligned-c2-4KiB": {"--checkpoint-mode", "unaligned", "--max-concurrent-checkpoints", "2", "--max-inflight-bytes", "4KiB", "--checkpoint-incremental=false"},
		// Incremental checkpoints (changed key groups written as deltas on
		// the sections already stored), alone and with two in flight.
		"aligned-incr":      {"--checkpoint-mode", "aligned", "--checkpoint-incremental"},
		"unaligned-incr-c2": {"--checkpoint-mode", "unaligned", "--checkpoint-incremental", "--max-concurrent-checkpoints", "2"},
	}
	metaSkipNoneCause = "mode none has no checkpoints to recover from"
)

// metaCell is one configuration of the metamorphic check.
type metaCell struct {
	Job   string
	Mode  string // one of metaModes
	P     int
	Chaos string // one of metaDisturbances
}

// String is the cell's name, as --cells takes it: job/mode/pN/disturbance.
func (c metaCell) String() string { return fmt.Sprintf("%s/%s/p%d/%s", c.Job, c.Mode, c.P, c.Chaos) }

// skip is why the cell does not apply, or "".
func (c metaCell) skip() string {
	if c.Mode == "none" && c.Chaos != "no-chaos" {
		return metaSkipNoneCause
	}
	return ""
}

// incremental reports whether the cell's checkpoints are incremental.
func (c metaCell) incremental() bool { return strings.Contains(c.Mode, "-incr") }

// reference is the cell every other cell of the job is compared with: no
// checkpoints, one instance, no disturbance.
func (c metaCell) reference() metaCell {
	return metaCell{Job: c.Job, Mode: "none", P: 1, Chaos: "no-chaos"}
}

// processKill reports whether the cell SIGKILLs a `node run` and restores.
func (c metaCell) processKill() bool { return strings.HasPrefix(c.Chaos, "kill-restore-") }

// allMetaCells is every cell of the given jobs, in a fixed order.
func allMetaCells(jobs []string) []metaCell {
	var cells []metaCell
	for _, job := range jobs {
		for _, mode := range metaModes {
			for _, p := range metaParallelisms {
				for _, d := range metaDisturbances {
					cells = append(cells, metaCell{Job: job, Mode: mode, P: p, Chaos: d})
				}
			}
		}
	}
	return cells
}

// parseMetaCell reads a cell's name.
func parseMetaCell(s string) (metaCell, error) {
	for _, c := range allMetaCells(metaJobs) {
		if c.String() == s {
			return c, nil
		}
	}
	return metaCell{}, fmt.Errorf("unknown cell %q: want JOB/MODE/pN/DISTURBANCE with JOB in %v, MODE in %v, N in %v, DISTURBANCE in %v",
		s, metaJobs, metaModes, metaParallelisms, metaDisturbances)
}

// cellSeed is the seed of a cell's random choices (actor kills, when to
// kill the process, which older checkpoint to restore): the run's seed and
// the cell's name, so that one cell replays alone with --cells.
func cellSeed(seed int64, c metaCell) int64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d/%s", seed, c)
	return int64(h.Sum64() >> 1)
}

// sampleMetaCells picks, for each job and disturbance, one cell of a mode
// with checkpoints and a parallelism drawn from seed: a subset that covers
// every disturbance for every job in few runs.
func sampleMetaCells(seed int64, jobs []string) []metaCell {
	rng := rand.New(rand.NewSource(seed))
	var cells []metaCell
	for _, job := range jobs {
		for _, d := range metaDisturbances {
			modes := metaModes[1:]
			cells = append(cells, metaCell{Job: job, Mode: modes[rng.Intn(len(modes))], P: metaParallelisms[rng.Intn(len(metaParallelisms))], Chaos: d})
		}
	}
	return cells
}
