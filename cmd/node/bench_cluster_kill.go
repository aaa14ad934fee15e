package main

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/cluster/node"
	"github.com/weirstream/weir/internal/poll"
	"github.com/weirstream/weir/transport"
)

// recoveryFigures are the recovery times of one kind of kill: SIGKILL →
// running again (S), split into detection (SIGKILL → the first node
// announces the victim dead) and restore (that announcement → data flows
// again after the job's coordinator reported it running).
type recoveryFigures struct {
	S        []float64 `json:"recovery_s"`
	P50S     float64   `json:"recovery_p50_s"`
	MaxS     float64   `json:"recovery_max_s"`
	DetectS  []float64 `json:"detection_s"`
	DetectP  float64   `json:"detection_p50_s"`
	DetectM  float64   `json:"detection_max_s"`
	RestoreS []float64 `json:"restore_s"`
	RestoreP float64   `json:"restore_p50_s"`
	RestoreM float64   `json:"restore_max_s"`
}

// recovery is one kill trial's times.
type recovery struct {
	Detect, Total time.Duration
}

// add records one trial.
func (f *recoveryFigures) add(r recovery) {
	f.S = append(f.S, r.Total.Seconds())
	f.DetectS = append(f.DetectS, r.Detect.Seconds())
	f.RestoreS = append(f.RestoreS, (r.Total - r.Detect).Seconds())
	f.P50S, f.MaxS = p50Max(f.S)
	f.DetectP, f.DetectM = p50Max(f.DetectS)
	f.RestoreP, f.RestoreM = p50Max(f.RestoreS)
}

// p50Max is the median and the largest of xs (not empty).
func p50Max(xs []float64) (float64, float64) {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return weir.Quantile(s, 0.5), s[len(s)-1]
}

// print writes the figures of one kind of kill, if there are any.
func (f recoveryFigures) print(w io.Writer, what string) {
	if len(f.S) == 0 {
		return
	}
	fmt.Fprintf(w, "  SIGKILL of %-22s → running again: p50 %.3f s, max %.3f s over %d kills %s\n", what, f.P50S, f.MaxS, len(f.S), secs(f.S))
	fmt.Fprintf(w, "    detection (→ declared dead)        p50 %.3f s, max %.3f s %s\n", f.DetectP, f.DetectM, secs(f.DetectS))
	fmt.Fprintf(w, "    restore (declared dead → running)  p50 %.3f s, max %.3f s %s\n", f.RestoreP, f.RestoreM, secs(f.RestoreS))
}

// secs renders times in seconds to the millisecond.
func secs(xs []float64) string {
	out := "["
	for i, x := range xs {
		if i > 0 {
			out += " "
		}
		out += fmt.Sprintf("%.3f", x)
	}
	return out + "]"
}

// killWatch follows a kill trial on the wire: the nodes' announcements of
// deaths (node.LostSubject), the coordinator's announcements that the job
// runs (node.ResumedSubject) and the job's data messages.
type killWatch struct {
	victim string
	mu     sync.Mutex
	armed  bool      // the victim was killed
	lost   time.Time // the first announcement that the victim is dead
	resume time.Time // the first report that the job runs, by a coordinator other than the victim, after lost
	data   time.Time // the first data message after resume
	subs   []*nats.Subscription
}

// watchKill subscribes to what a kill trial of job measures.
func watchKill(nc *nats.Conn, job string, tr *wireTrace) (*killWatch, error) {
	w := &killWatch{}
	on := func(subject string, h nats.MsgHandler) error {
		s, err := nc.Subscribe(subject, h)
		if err != nil {
			return fmt.Errorf("subscribe %s: %w", subject, err)
		}
		w.subs = append(w.subs, s)
		return nil
	}
	err := errors.Join(
		on(node.LostSubject("*"), func(m *nats.Msg) {
			now := time.Now()
			var n node.NodeLostNotice
			if node.Decode(m, &n) != nil {
				return
			}
			w.mu.Lock()
			if w.armed && n.Node == w.victim && w.lost.IsZero() {
				w.lost = now
			}
			w.mu.Unlock()
		}),
		on(node.ResumedSubject(job), func(m *nats.Msg) {
			now := time.Now()
			e, err := transport.FromMsg(m)
			if err != nil {
				return
			}
			var ev node.JobEvent
			if node.Decode(&nats.Msg{Subject: m.Subject, Data: e.Payload}, &ev) != nil {
				return
			}
			w.mu.Lock()
			if !w.lost.IsZero() && w.resume.IsZero() && ev.Coordinator != w.victim {
				w.resume = now
			}
			w.mu.Unlock()
		}),
		on("weir."+job+".data.>", func(*nats.Msg) {
			now := time.Now()
			tr.note(now)
			w.mu.Lock()
			if !w.resume.IsZero() && w.data.IsZero() {
				w.data = now
			}
			w.mu.Unlock()
		}),
	)
	if err != nil {
		w.stop()
		return nil, err
	}
	return w, nc.Flush()
}

// arm marks the moment victim is killed.
func (w *killWatch) arm(victim string) {
	w.mu.Lock()
	w.victim, w.armed = victim, true
	w.mu.Unlock()
}

// times returns the announcement of the death and the first data after
// the job ran again (zero until seen).
func (w *killWatch) times() (lost, running time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.lost, w.data
}

func (w *killWatch) stop() {
	for _, s := range w.subs {
		_ = s.Unsubscribe()
	}
}

// killTrial runs keycount until it has checkpoints, SIGKILLs the node of
// its coordinator (coord: n2, since n1 runs the NATS server the cluster
// needs) or a node that runs tasks for a coordinator on n1, and measures
// the time from the kill until a node announces the victim dead, and until
// data flows again after the job's coordinator (not the victim) reported
// the job running again. It checks that the job then runs without the
// victim, cancels it and starts the node again.
func killTrial(bc *nodeNet, cfg clusterBenchConfig, coord bool, tr *wireTrace) (recovery, error) {
	coordinator := nodeID(1)
	if coord {
		coordinator = nodeID(2)
	}
	if out, err := bc.client("submit", "keycount", "--records", "-1", "--keys", fmt.Sprint(cfg.Keys),
		"--parallelism", fmt.Sprint(cfg.Parallelism), "--sleep-ms", "0.002", "--coordinator", coordinator, "--detach"); err != nil {
		return recovery{}, fmt.Errorf("submit: %w\n%s", err, out)
	}
	w, err := watchKill(bc.nc, "keycount", tr)
	if err != nil {
		return recovery{}, err
	}
	defer w.stop()
	var before jobStatusView
	var victim string
	chosen := func() bool {
		s, err := bc.status()
		if err != nil {
			return false
		}
		j, err := s.jobView("keycount")
		if err != nil || j.State != "running" || len(j.Checkpoints) < 2 {
			return false
		}
		before, victim = j, killVictim(j, coord)
		return victim != ""
	}
	if !poll.Until(60*time.Second, 200*time.Millisecond, chosen) {
		return recovery{}, fmt.Errorf("no running job with two checkpoints and a node to kill (coordinator kill: %v) within 60s", coord)
	}
	w.arm(victim)
	killed := time.Now()
	if err := bc.kill(victim); err != nil {
		return recovery{}, err
	}
	var lost, running time.Time
	seen := func() bool { lost, running = w.times(); return !running.IsZero() }
	if !poll.Until(60*time.Second, 10*time.Millisecond, seen) {
		lost, _ = w.times()
		return recovery{}, fmt.Errorf("the job did not run again within 60s of the kill (victim declared dead: %v)", !lost.IsZero())
	}
	tr.mark(killed, running)
	// Not timed: the job runs without the victim, restarted or taken over.
	without := func() bool {
		s, err := bc.status()
		if err != nil {
			return false
		}
		j, err := s.jobView("keycount")
		if err != nil || j.State != "running" || j.Coordinator == victim || j.Coordinator == "" {
			return false
		}
		for _, n := range j.Tasks {
			if n == victim {
				return false
			}
		}
		return j.Restarts > before.Restarts || j.Coordinator != before.Coordinator
	}
	if !poll.Until(30*time.Second, 100*time.Millisecond, without) {
		return recovery{}, errors.New("the job did not run without the victim within 30s of running again")
	}
	if out, err := bc.client("cancel", "keycount"); err != nil {
		return recovery{}, fmt.Errorf("cancel: %w\n%s", err, out)
	}
	ended := func() bool {
		s, err := bc.status()
		if err != nil {
			return false
		}
		j, err := s.jobView("keycount")
		return errors.Is(err, errNoJob) || j.State != "running"
	}
	if !poll.Until(60*time.Second, 100*time.Millisecond, ended) {
		return recovery{}, errors.New("the job did not end within 60s of the cancel")
	}
	if err := bc.startNode(victim); err != nil {
		return recovery{}, err
	}
	if err := bc.waitNodes(bc.opts.Nodes, 30*time.Second); err != nil {
		return recovery{}, err
	}
	return recovery{Detect: lost.Sub(killed), Total: running.Sub(killed)}, nil
}

// killVictim is the node a kill trial kills in job j: its coordinator's
// node (coord), or a node that runs its tasks and is neither the
// coordinator's nor n1 (the NATS server's); "" when there is none to kill.
func killVictim(j jobStatusView, coord bool) string {
	if coord {
		if j.Coordinator == nodeID(1) {
			return ""
		}
		return j.Coordinator
	}
	var nodes []string
	for _, n := range j.Tasks {
		if n != j.Coordinator && n != nodeID(1) {
			nodes = append(nodes, n)
		}
	}
	if len(nodes) == 0 {
		return ""
	}
	sort.Strings(nodes)
	return nodes[0]
}
