package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/weirstream/weir/cluster"
	"github.com/weirstream/weir/cluster/node"
	"github.com/weirstream/weir/rescale"
	"github.com/weirstream/weir/transport"
)

// rescaleAnswerWait bounds the wait for the coordinator to accept a rescale
// (it plans it and, with checkpoints, may wait for a running one first).
const rescaleAnswerWait = 30 * time.Second

// rescaleCommitWait bounds the wait of an attached `node rescale` for the
// commit.
const rescaleCommitWait = 5 * time.Minute

// maxRescaleParallelism is the highest parallelism `node rescale` asks for:
// above it the request is a typo (the planner also refuses more instances
// than the job has key groups).
const maxRescaleParallelism = 32768

// rescaleCmd is `node rescale JOB --operator NAME --parallelism N ...`.
func (r *registry) rescaleCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cf := newClientCommand(nil, "rescale", "node rescale JOB --operator NAME --parallelism N [--operator NAME --parallelism N ...] [--detach]",
		"Changes operators' parallelism while the job runs: only the key groups that change owner move,\nthe others keep processing. Follows the rescale to its commit unless --detach.")
	var ops []string
	var pars []int
	cf.fs.Func("operator", "an operator to rescale (repeatable; pairs with the --parallelism after it)", func(s string) error {
		if s == "" {
			return errors.New("empty operator name")
		}
		ops = append(ops, s)
		return nil
	})
	cf.fs.Func("parallelism", "the operator's new parallelism (repeatable)", func(s string) error {
		n, err := strconv.Atoi(s)
		if err != nil {
			return fmt.Errorf("parallelism %q is not a number", s)
		}
		if n < 1 || n > maxRescaleParallelism {
			return fmt.Errorf("parallelism %d: want 1 to %d", n, maxRescaleParallelism)
		}
		pars = append(pars, n)
		return nil
	})
	detach := cf.fs.Bool("detach", false, "return once the coordinator has accepted the rescale")
	pos, help, err := cf.parse(args, stdout)
	if help || err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("rescale: want exactly one job name")
	}
	job := pos[0]
	if err := transport.ValidJob(job); err != nil {
		return usagef("rescale: %v", err)
	}
	if len(ops) == 0 || len(ops) != len(pars) {
		return usagef("rescale: want --operator NAME --parallelism N pairs (got %d operators, %d parallelisms)", len(ops), len(pars))
	}
	req := node.RescaleRequest{Job: job, Detach: *detach}
	seen := map[string]bool{}
	for i, op := range ops {
		if seen[op] {
			return usagef("rescale: operator %q given twice", op)
		}
		seen[op] = true
		req.Targets = append(req.Targets, rescale.Target{Operator: op, Parallelism: pars[i]})
	}
	nc, err := cf.connect("weir rescale " + job)
	if err != nil {
		return fmt.Errorf("rescale: %w", err)
	}
	defer nc.Close()
	rec, err := runningJob(ctx, nc, job)
	if err != nil {
		return fmt.Errorf("rescale: %w", err)
	}
	return followRescale(nc, req, rec.Coordinator, stdout)
}

// runningJob is the registry record of job, or why it cannot be rescaled.
func runningJob(ctx context.Context, nc *nats.Conn, job string) (cluster.JobRecord, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return cluster.JobRecord{}, err
	}
	jobs, err := cluster.OpenJobs(ctx, js, cluster.DefaultJobBucket)
	if err != nil {
		return cluster.JobRecord{}, fmt.Errorf("job registry: %w", err)
	}
	rec, _, err := jobs.Get(ctx, job)
	if errors.Is(err, cluster.ErrJobNotFound) {
		return rec, fmt.Errorf("unknown job %q: it was never submitted to this cluster", job)
	}
	if err != nil {
		return rec, fmt.Errorf("job registry: %w", err)
	}
	if rec.State != cluster.JobRunning {
		return rec, fmt.Errorf("job %s is not running (%s)", job, rec.State)
	}
	return rec, nil
}

// followRescale sends the request and prints the coordinator's answers:
// the plan, then (attached) the commit.
func followRescale(nc *nats.Conn, req node.RescaleRequest, coordinator string, stdout io.Writer) error {
	inbox := nc.NewRespInbox()
	sub, err := nc.SubscribeSync(inbox)
	if err != nil {
		return fmt.Errorf("rescale: %w", err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	if err := nc.PublishRequest(node.RescaleSubject, inbox, node.Encode(req)); err != nil {
		return fmt.Errorf("rescale: %w", err)
	}
	wait := rescaleAnswerWait
	for {
		m, err := sub.NextMsg(wait)
		if errors.Is(err, nats.ErrTimeout) {
			if wait == rescaleAnswerWait {
				return fmt.Errorf("rescale: job %s has no live coordinator answering (was %s); retry once a node has taken it over", req.Job, coordinator)
			}
			return fmt.Errorf("rescale: no outcome within %v: see `node status` for the job's rescales", wait)
		}
		if err != nil {
			return fmt.Errorf("rescale: %w", err)
		}
		var rep node.RescaleReply
		if err := node.Decode(m, &rep); err != nil {
			return fmt.Errorf("rescale: %w", err)
		}
		if rep.Error != "" {
			return fmt.Errorf("rescale: %s", rep.Error)
		}
		switch rep.Stage {
		case node.RescalePlanned:
			fmt.Fprintf(stdout, "rescale %d of %s planned: %s\n", rep.Seq, req.Job, rep.Changes)
			if len(rep.Placed) > 0 {
				fmt.Fprintf(stdout, "new instances: %s\n", strings.Join(rep.Placed, ", "))
			}
			if req.Detach {
				fmt.Fprintf(stdout, "detached: `node status` shows the job's rescales\n")
				return nil
			}
			wait = rescaleCommitWait
		case node.RescaleRunning:
			fmt.Fprintf(stdout, "rescale %d of %s: running for %.1f s\n", rep.Seq, req.Job, rep.TookMs/1000)
		case node.RescaleDone:
			fmt.Fprintf(stdout, "rescale %d of %s committed: took %.0f ms, moved %d key groups (fewest possible %d), %d bytes, longest pause %.0f ms\n",
				rep.Seq, req.Job, rep.TookMs, rep.Moves, rep.Minimum, rep.Bytes, rep.LongestPauseMs)
			if f := rep.Figures; f != nil && f.Flow != nil {
				fmt.Fprintf(stdout, "rescale %d of %s: %s\n", rep.Seq, req.Job, f.Flow)
			}
			return nil
		default:
			return fmt.Errorf("rescale: unexpected answer %q", rep.Stage)
		}
	}
}
