package node

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/weirstream/weir/actors"
	"github.com/weirstream/weir/cluster"
	"github.com/weirstream/weir/rescale"
	"github.com/weirstream/weir/rescale/flow"
)

// RescaleSubject asks the coordinator of a job to rescale it live.
const RescaleSubject = "weir.cluster.rescale"

// rescaleWait bounds how long an attached `node rescale` is answered for.
const rescaleWait = 5 * time.Minute

// RescaleRequest asks a job's coordinator to change operators' parallelism
// while the job runs. The coordinator answers on the request's reply
// subject: once planned (RescalePlanned), and, unless Detach, again when
// the rescale committed or failed (RescaleDone).
type RescaleRequest struct {
	Job     string           `msgpack:"job"`
	Targets []rescale.Target `msgpack:"targets"`
	Detach  bool             `msgpack:"detach,omitempty"`
}

// Stages of a RescaleReply.
const (
	RescalePlanned = "planned"
	RescaleRunning = "running" // progress: TookMs is the time since it started
	RescaleDone    = "committed"
)

// rescaleProgressEvery is how often an attached `node rescale` is told
// that the rescale still runs.
const rescaleProgressEvery = time.Second

// RescaleReply is one answer to a RescaleRequest: an error, the plan, or
// the committed rescale's figures.
type RescaleReply struct {
	Stage string `msgpack:"stage,omitempty"`
	Error string `msgpack:"error,omitempty"`
	// Seq numbers the job's rescales; Changes is the plan's summary.
	Seq     uint64 `msgpack:"seq,omitempty"`
	Changes string `msgpack:"changes,omitempty"`
	// Moves key groups, against the fewest any balanced plan could move.
	Moves   int `msgpack:"moves"`
	Minimum int `msgpack:"min"`
	// Placed names the node of each added instance ("count[2] on n3").
	Placed []string `msgpack:"placed,omitempty"`
	// Figures of the committed rescale.
	TookMs         float64 `msgpack:"took_ms,omitempty"`
	Bytes          int64   `msgpack:"bytes,omitempty"`
	LongestPauseMs float64 `msgpack:"longest_pause_ms,omitempty"`
	// Figures are all the committed rescale's figures.
	Figures *cluster.RescaleFigures `msgpack:"figures,omitempty"`
}

// onRescale starts a live rescale of a job this node coordinates and
// answers as it goes, off the subscription's goroutine.
func (a *Agent) onRescale(m *nats.Msg) {
	var req RescaleRequest
	if err := Decode(m, &req); err != nil {
		a.counters.Malformed.Add(1)
		a.log.Warn().Err(err).Msg("bad rescale request: dropped")
		return
	}
	a.mu.Lock()
	cj := a.coord[req.Job]
	a.mu.Unlock()
	if cj == nil {
		return // the coordinator answers
	}
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		a.rescale(m, cj, req)
	}()
}

// rescale carries out one rescale request.
func (a *Agent) rescale(m *nats.Msg, cj *coordJob, req RescaleRequest) {
	ctx, cancel := context.WithTimeout(context.Background(), rescaleWait)
	defer cancel()
	go func() {
		select {
		case <-a.quit:
			cancel()
		case <-ctx.Done():
		}
	}()
	want := map[string]int{}
	for _, t := range req.Targets {
		want[t.Operator] = t.Parallelism
	}
	run, err := cj.job.StartRescale(ctx, want)
	if err != nil {
		a.reply(m, RescaleReply{Error: err.Error()})
		return
	}
	p := run.Plan
	a.log.Info().Str("job", req.Job).Uint64("rescale", p.Input.Seq).Str("changes", p.Summary()).
		Int("moves", p.Moved()).Int("min_moves", p.Minimum()).Bool("detach", req.Detach).Msg("rescale requested")
	planned := RescaleReply{Stage: RescalePlanned, Seq: p.Input.Seq, Changes: p.Summary(), Moves: p.Moved(), Minimum: p.Minimum()}
	for _, pl := range p.Placement {
		planned.Placed = append(planned.Placed, fmt.Sprintf("%s[%d] on %s", pl.Operator, pl.Instance, pl.Node))
	}
	a.reply(m, planned)
	if rerr := a.recordRescalePlanned(req.Job, p, time.Now()); rerr != nil {
		a.log.Warn().Err(rerr).Str("job", req.Job).Uint64("rescale", p.Input.Seq).Msg("record the rescale as running")
	}
	res, err := a.waitRescale(ctx, m, run, req.Detach)
	if rerr := a.recordRescaleEnded(req.Job, p, res, err); rerr != nil {
		a.log.Error().Err(rerr).Str("job", req.Job).Uint64("rescale", p.Input.Seq).
			Msg("record the rescale's outcome: a takeover builds the job at the parallelisms its record has")
	}
	if req.Detach {
		return
	}
	if err != nil {
		a.reply(m, RescaleReply{Error: err.Error()}) // it names the rescale
		return
	}
	a.reply(m, rescaleDone(res))
}

// rescaleDone is the answer for a committed rescale.
func rescaleDone(res rescale.Result) RescaleReply {
	return RescaleReply{Stage: RescaleDone, Seq: res.Rescale, Changes: res.Changes, Moves: res.Moved, Minimum: res.Minimum,
		TookMs: ms(res.Took), Bytes: res.Bytes, LongestPauseMs: ms(res.LongestPause), Figures: rescaleFigures(res)}
}

// rescaleFigures are a committed rescale's figures as records and answers
// carry them.
func rescaleFigures(res rescale.Result) *cluster.RescaleFigures {
	return &cluster.RescaleFigures{TookMs: ms(res.Took), Moved: res.Moved, Minimum: res.Minimum, Bytes: res.Bytes,
		LongestPauseMs: ms(res.LongestPause), Flow: res.Flow}
}

// ms is d in milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// RescaleStatus is a job's live rescales as `node status` shows them.
type RescaleStatus struct {
	Count int          `msgpack:"count" json:"count"`
	Last  *RescaleLast `msgpack:"last,omitempty" json:"last,omitempty"`
}

// RescaleLast is the latest committed rescale of a job.
type RescaleLast struct {
	Seq            uint64          `msgpack:"seq" json:"seq"`
	Changes        []RescaleChange `msgpack:"changes" json:"changes"`
	TookMs         float64         `msgpack:"took_ms" json:"took_ms"`
	Moved          int             `msgpack:"moved" json:"moved"`
	Minimum        int             `msgpack:"min" json:"min_moves"`
	Bytes          int64           `msgpack:"bytes" json:"bytes"`
	LongestPauseMs float64         `msgpack:"longest_pause_ms" json:"longest_pause_ms"`
	// Flow is its throughput and latency figures (nil: not measured).
	Flow *flow.Flow `msgpack:"flow,omitempty" json:"flow,omitempty"`
}

// RescaleChange is one operator's parallelism before and after.
type RescaleChange = cluster.RescaleChange

// rescaleStatus is what `node status` shows of job's rescales (nil: none).
func rescaleStatus(j *actors.Job) *RescaleStatus {
	s := j.Rescales()
	if s.Count == 0 {
		return nil
	}
	out := &RescaleStatus{Count: s.Count}
	if l := s.Last; l != nil {
		out.Last = &RescaleLast{Seq: l.Seq, TookMs: ms(l.Took), Moved: l.Moved, Minimum: l.Minimum, Bytes: l.Bytes,
			LongestPauseMs: ms(l.LongestPause), Flow: l.Flow}
		for _, c := range l.Changes {
			out.Last.Changes = append(out.Last.Changes, RescaleChange{Operator: c.Operator, From: c.From, To: c.To})
		}
	}
	return out
}

// waitRescale waits for run's outcome; unless detach, it answers every
// rescaleProgressEvery that the rescale still runs, with the time since it
// started.
func (a *Agent) waitRescale(ctx context.Context, m *nats.Msg, run *actors.RescaleRun, detach bool) (rescale.Result, error) {
	type outcome struct {
		res rescale.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := run.Wait(ctx)
		done <- outcome{res, err}
	}()
	started := time.Now()
	tick := time.NewTicker(rescaleProgressEvery)
	defer tick.Stop()
	for {
		select {
		case o := <-done:
			return o.res, o.err
		case <-tick.C:
			if !detach {
				a.reply(m, RescaleReply{Stage: RescaleRunning, Seq: run.Plan.Input.Seq, Changes: run.Plan.Summary(), TookMs: ms(time.Since(started))})
			}
		}
	}
}
