// Package sessions is the session-window sample: a seeded stream of clicks
// in event time, out of order by up to a second, each user's clicks grouped
// into sessions that end after --gap of silence, one {key,start,end,value}
// line per session with its click count. A few clicks arrive an hour late:
// they are sent to a late file of their own.
package sessions

import (
	"errors"
	"fmt"
	"time"

	"github.com/weirstream/weir"
)

// Click is one input record: a user's click at event time TS (Unix ms).
type Click struct {
	User string `msgpack:"u" json:"user"`
	TS   int64  `msgpack:"t" json:"ts"`
	Seq  int64  `msgpack:"i" json:"seq"`
}

// Session is one output record: a user's session and its click count.
type Session = weir.WindowResult[string, int64]

// Base is the event time of click 0.
var Base = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

const (
	// Step is the event time between consecutive clicks.
	Step = 10 * time.Millisecond
	// Disorder bounds how far a click's time is behind a later click's.
	Disorder = 500 * time.Millisecond
	// OutOfOrderness is the watermark's bound (more than Disorder: no
	// on-time click is ever late).
	OutOfOrderness = time.Second
	// Gap ends a session.
	Gap = 1500 * time.Millisecond
	// blockLen clicks share one set of active users (2 s of event time).
	blockLen = 200
	// activePerBlock users click in each block.
	activePerBlock = 4
	// lateEvery: every lateEvery-th click from lateFrom on is an hour late.
	lateEvery = 997
)

// Config sizes the job.
type Config struct {
	Records     int64 // clicks
	Users       int
	Parallelism int // of the session operator (the source runs once)
	Seed        int64
	Out         string  // sessions, JSON lines (required)
	LateOut     string  // late clicks, JSON lines (required)
	SleepMs     float64 // average sleep per click before the session operator
}

// mix is splitmix64: a seeded hash of i.
func mix(seed, i int64) uint64 {
	z := uint64(seed) + uint64(i)*0x9E3779B97F4A7C15
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

// lateFrom is the first click that may be late: far enough into the stream
// that every instance's watermark is past the hour-old time by then, so
// lateness does not depend on timing.
func lateFrom(n int64) int64 { return max(n/3, 20000) }

// IsLate reports whether click i of n is one of the hour-late ones.
func IsLate(i, n int64) bool { return i >= lateFrom(n) && i%lateEvery == 0 }

// MakeClick is click i of n: its user is one of the block's active users,
// its time i·Step plus up to Disorder of jitter (an hour earlier if late).
func MakeClick(seed, i, n int64, users int) Click {
	block := i / blockLen
	slot := mix(seed, i) % activePerBlock
	user := mix(seed^0x5eed, block*activePerBlock+int64(slot)) % uint64(users)
	ts := Base.Add(time.Duration(i)*Step + time.Duration(mix(seed^0x71e, i)%uint64(Disorder)))
	if IsLate(i, n) {
		ts = ts.Add(-time.Hour)
	}
	return Click{User: fmt.Sprintf("u%04d", user), TS: ts.UnixMilli(), Seq: i}
}

// Build makes the sessions graph: generate → slow (sleep) → timestamps →
// session count by user → file; late clicks → late file.
func Build(cfg Config) (*weir.Graph, error) {
	switch {
	case cfg.Records < 0:
		return nil, fmt.Errorf("sessions: records %d must be ≥ 0 (a bounded stream)", cfg.Records)
	case cfg.Users < 1:
		return nil, fmt.Errorf("sessions: users %d must be ≥ 1", cfg.Users)
	case cfg.Parallelism < 1:
		return nil, fmt.Errorf("sessions: parallelism %d must be ≥ 1", cfg.Parallelism)
	case cfg.Out == "" || cfg.LateOut == "":
		return nil, errors.New("sessions: the sessions and late files are required")
	case cfg.SleepMs < 0:
		return nil, fmt.Errorf("sessions: sleep-ms %v must be ≥ 0", cfg.SleepMs)
	}
	g := weir.NewGraph("sessions")
	n := cfg.Records
	clicks := weir.Generate(g, "clicks", n, func(i int64) Click { return MakeClick(cfg.Seed, i, n, cfg.Users) })
	sleepers := weir.NewSleepers(time.Duration(cfg.SleepMs * float64(time.Millisecond)))
	slow := weir.MapWithContext(clicks, "slow", func(ctx *weir.OpContext, c Click) Click {
		sleepers[ctx.Instance()].Tick()
		return c
	})
	timed := weir.WithTimestamps(slow, "timestamps", func(c Click) time.Time { return time.UnixMilli(c.TS) },
		weir.BoundedOutOfOrderness(OutOfOrderness))
	w := weir.Window(weir.KeyBy(timed, func(c Click) string { return c.User }), weir.Session(Gap)).SideOutputLate()
	sessions := weir.Aggregate(w, "sessions", weir.Count[Click](), weir.Parallelism(cfg.Parallelism))
	weir.ToSink(sessions, "sink", weir.FileSink[Session](cfg.Out))
	late, _ := w.Late().Stream()
	weir.ToSink(late, "late-sink", weir.FileSink[Click](cfg.LateOut))
	return g, nil
}
