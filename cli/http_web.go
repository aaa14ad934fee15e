package cli

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"

	"github.com/weirstream/weir/actors"
	"github.com/weirstream/weir/cluster/node"
	"github.com/weirstream/weir/web"
)

// webStatusWait is how long the page's cluster status waits for the nodes'
// answers.
const webStatusWait = 300 * time.Millisecond

// URL is the page's address.
func (s *httpServer) URL() string { return "http://" + s.ln.Addr().String() + "/" }

// announceWeb tells where the page is, on stderr and in the log.
func announceWeb(stderr io.Writer, log zerolog.Logger, s *httpServer) {
	fmt.Fprintf(stderr, "web page: %s\n", s.URL())
	log.Info().Str("url", s.URL()).Msg("web page and JSON API listening")
}

// runJobs holds the job `node run` runs, for the page.
type runJobs struct {
	mu   sync.Mutex
	jobs []*actors.Job
}

func (r *runJobs) add(j *actors.Job) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.jobs = append(r.jobs, j)
}

func (r *runJobs) list() []*actors.Job {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*actors.Job(nil), r.jobs...)
}

// clusterWebSource shows the cluster a node started with `node start` is in:
// the status `node status` reads, the nodes' local state from their
// heartbeats, and the jobs this node coordinates.
func clusterWebSource(nc *nats.Conn, a *node.Agent) web.Source {
	status := func(ctx context.Context) (*web.ClusterStatus, error) {
		st, err := collectStatus(ctx, nc, webStatusWait)
		if err != nil {
			return nil, err
		}
		return webClusterStatus(st, a), nil
	}
	return web.NewClusterSource(a.ID(), status, a.CoordinatedJobs, a.PartDumps)
}

// webClusterStatus converts what `node status` collects for the page.
func webClusterStatus(st *clusterStatus, a *node.Agent) *web.ClusterStatus {
	held := map[string][]web.HeldState{}
	for _, hb := range a.AliveNodes() {
		for _, h := range hb.Held {
			held[hb.Node] = append(held[hb.Node], web.HeldState{Job: h.Job, Operator: h.Operator, Checkpoint: h.Checkpoint, KeyGroups: h.KeyGroups})
		}
	}
	out := &web.ClusterStatus{}
	for _, n := range st.Nodes {
		out.Nodes = append(out.Nodes, web.Node{ID: n.Node, Slots: n.Slots, Used: n.Used, HeartbeatAgeS: n.AgeS,
			Jobs: n.Parts, Held: held[n.Node]})
	}
	for _, j := range st.Jobs {
		cj := web.ClusterJob{JobSummary: web.JobSummary{Name: j.Name, State: j.State, Coordinator: j.Coordinator,
			Error: j.Error, Restarts: j.Restarts, Checkpoints: len(j.Checkpoints)}, Tasks: j.Tasks}
		for _, c := range j.Checkpoints {
			cj.Checkpoints = append(cj.Checkpoints, web.Checkpoint{ID: c.ID, Mode: c.Mode, DurationMs: c.DurationMs})
		}
		out.Jobs = append(out.Jobs, cj)
	}
	return out
}
