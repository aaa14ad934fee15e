package cli

import (
	"flag"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/weirstream/weir"
)

// The limits of the numeric flags of `node run` and `node submit`. They keep
// a typo from turning into an out-of-memory crash or a job that never
// checkpoints; each is far from what a real run needs.
const (
	maxRecords         = 1_000_000_000_000 // a day at over 10 M records/s
	maxKeys            = 1_000_000         // keycount keeps every key string in memory
	maxValueBytes      = 1 << 20
	maxSleepMs         = 1000
	maxDuration        = 30 * 24 * time.Hour
	maxBatchSize       = 65536
	maxChannelCapacity = 1024
	minFlushInterval   = 100 * time.Microsecond
	maxFlushInterval   = 10 * time.Second
	minCheckpointEvery = time.Millisecond
	maxCheckpointEvery = time.Hour
	minCheckpointLimit = 10 * time.Millisecond
	maxCheckpointLimit = 24 * time.Hour
	minAlignedTimeout  = 100 * time.Microsecond
	maxAlignedTimeout  = time.Hour
	maxRetain          = 1000
	maxConcurrentCkpts = 16
	maxMaxRestarts     = 10000
	minRestartWindow   = time.Millisecond
	maxRestartWindow   = 24 * time.Hour
	minChaosEvery      = time.Millisecond
	maxChaosEvery      = time.Hour
)

// intRange is the accepted range of an integer flag: lo..hi, or special
// when it has a meaning.
type intRange struct {
	name    string
	lo, hi  int64
	special int64
	meaning string // of special; "" when special is outside the range
	get     func(*runFlags) int64
}

// durRange is the accepted range of a duration flag: lo..hi, or 0 when zero
// has a meaning.
type durRange struct {
	name   string
	lo, hi time.Duration
	zero   string // meaning of 0; "" when 0 is outside the range
	get    func(*runFlags) time.Duration
}

// intRanges are the integer flags' ranges, checked in this order.
var intRanges = []intRange{
	{name: "parallelism", lo: 1, hi: weir.DefaultMaxParallelism, get: func(f *runFlags) int64 { return int64(f.params.Parallelism) }},
	{name: "records", lo: 0, hi: maxRecords, special: weir.Unbounded, meaning: "unbounded", get: func(f *runFlags) int64 { return f.params.Records }},
	{name: "keys", lo: 1, hi: maxKeys, get: func(f *runFlags) int64 { return int64(f.params.Keys) }},
	{name: "value-bytes", lo: 1, hi: maxValueBytes, get: func(f *runFlags) int64 { return int64(f.params.ValueBytes) }},
	{name: "batch-size", lo: 1, hi: maxBatchSize, meaning: "runtime default", get: func(f *runFlags) int64 { return int64(f.batchSize) }},
	{name: "channel-capacity", lo: 1, hi: maxChannelCapacity, meaning: "runtime default", get: func(f *runFlags) int64 { return int64(f.channelCapacity) }},
	{name: "retain", lo: 1, hi: maxRetain, get: func(f *runFlags) int64 { return int64(f.retain) }},
	{name: "max-concurrent-checkpoints", lo: 1, hi: maxConcurrentCkpts, get: func(f *runFlags) int64 { return int64(f.maxConcurrent) }},
	{name: "checkpoint-max-deltas", lo: 1, hi: 1000, meaning: "32", get: func(f *runFlags) int64 { return int64(f.maxDeltas) }},
	{name: "max-restarts", lo: 0, hi: maxMaxRestarts, get: func(f *runFlags) int64 { return int64(f.maxRestarts) }},
}

// durRanges are the duration flags' ranges, checked in this order.
var durRanges = []durRange{
	{name: "duration", lo: time.Millisecond, hi: maxDuration, zero: "no limit", get: func(f *runFlags) time.Duration { return f.duration }},
	{name: "flush-interval", lo: minFlushInterval, hi: maxFlushInterval, zero: "runtime default", get: func(f *runFlags) time.Duration { return f.flushInterval }},
	{name: "checkpoint-interval", lo: minCheckpointEvery, hi: maxCheckpointEvery, get: func(f *runFlags) time.Duration { return f.checkpointInterval }},
	{name: "checkpoint-timeout", lo: minCheckpointLimit, hi: maxCheckpointLimit, get: func(f *runFlags) time.Duration { return f.checkpointTimeout }},
	{name: "aligned-timeout", lo: minAlignedTimeout, hi: maxAlignedTimeout, zero: "never", get: func(f *runFlags) time.Duration { return f.alignedTimeout }},
	{name: "restart-window", lo: minRestartWindow, hi: maxRestartWindow, get: func(f *runFlags) time.Duration { return f.restartWindow }},
	{name: "chaos-kill-every", lo: minChaosEvery, hi: maxChaosEvery, zero: "never", get: func(f *runFlags) time.Duration { return f.chaosEvery }},
}

// text states the range as help and errors print it.
func (r intRange) text() string {
	s := fmt.Sprintf("%d to %d", r.lo, r.hi)
	if r.meaning != "" {
		s = fmt.Sprintf("%d (%s) or %s", r.special, r.meaning, s)
	}
	return s
}

func (r durRange) text() string {
	s := fmt.Sprintf("%s to %s", shortDur(r.lo), shortDur(r.hi))
	if r.zero != "" {
		s = fmt.Sprintf("0 (%s) or %s", r.zero, s)
	}
	return s
}

// shortDur writes d as time.Duration does without trailing zero units
// ("1h", not "1h0m0s").
func shortDur(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// sleepMsText is the range of --sleep-ms.
var sleepMsText = fmt.Sprintf("0 to %d", maxSleepMs)

// checkRanges reports the first numeric flag outside its range, in one line.
func (f *runFlags) checkRanges() error {
	for _, r := range intRanges {
		v := r.get(f)
		if (v < r.lo || v > r.hi) && (r.meaning == "" || v != r.special) {
			return fmt.Errorf("--%s %d is out of range: want %s", r.name, v, r.text())
		}
	}
	if v := f.params.SleepMs; !(v >= 0 && v <= maxSleepMs) || math.IsNaN(v) {
		return fmt.Errorf("--sleep-ms %v is out of range: want %s", v, sleepMsText)
	}
	for _, r := range durRanges {
		v := r.get(f)
		if (v < r.lo || v > r.hi) && (r.zero == "" || v != 0) {
			return fmt.Errorf("--%s %v is out of range: want %s", r.name, v, r.text())
		}
	}
	return nil
}

// describeRanges appends each bounded flag's range to its usage text, so
// `node help` states what checkRanges enforces.
func describeRanges(fs *flag.FlagSet) {
	add := func(name, text string) {
		if fl := fs.Lookup(name); fl != nil {
			fl.Usage += "; " + text
		}
	}
	for _, r := range intRanges {
		add(r.name, r.text())
	}
	add("sleep-ms", sleepMsText)
	for _, r := range durRanges {
		add(r.name, r.text())
	}
}
