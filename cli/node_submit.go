package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/weirstream/weir/cluster"
	"github.com/weirstream/weir/cluster/node"
	"github.com/weirstream/weir/transport"
)

// submitTimeout bounds the wait for a node to accept a submission (it
// prepares every node's part of the job first).
const submitTimeout = 60 * time.Second

// submit is `node submit JOB [job flags] [--detach] [--coordinator ID]`.
func (r *registry) submit(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var f runFlags
	fs := newRunFlagSet(&f)
	cf := newClientCommand(fs, "submit", "node submit JOB [flags]",
		"Submits a registered job to the cluster and, unless --detach, follows it: progress\non stderr, exit 0 when it finishes, 1 with the reason when it fails or is\ncancelled. Job flags are those of `node run`; checkpoints go to the cluster's\nJetStream store (--state-dir is not used).")
	detach := fs.Bool("detach", false, "return once the job is accepted instead of following it to its end")
	coordinator := fs.String("coordinator", "", "run the job's coordinator on this node `ID` (default: any node)")
	var jf *jobFlags
	if named, ok := r.findJob(args); ok {
		var err error
		if jf, err = declareJobFlags(fs, named); err != nil {
			return err
		}
	}
	if err := applyEnv(fs, r.getenv); err != nil {
		return usagef("submit: %v", err)
	}
	pos, help, err := cf.parse(args, stdout)
	if help || err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("submit: want exactly one job (known: %s)", r.jobNames())
	}
	// Forward only the job's flags; check them here as every node will.
	runNames := map[string]bool{}
	newRunFlagSet(&runFlags{}).VisitAll(func(fl *flag.Flag) { runNames[fl.Name] = true })
	var jobArgs []string
	fs.Visit(func(fl *flag.Flag) {
		if runNames[fl.Name] || (jf != nil && jf.names[fl.Name]) {
			jobArgs = append(jobArgs, "--"+fl.Name+"="+fl.Value.String())
		}
	})
	if _, err := r.parseJob("submit", append([]string{pos[0]}, jobArgs...), false); err != nil {
		return err
	}
	job := pos[0]
	nc, err := cf.connect("weir submit " + job)
	if err != nil {
		return fmt.Errorf("submit: %w", err)
	}
	defer nc.Close()
	events := make(chan *nats.Msg, 64)
	sub, err := nc.ChanSubscribe(node.EventsSubject(job), events)
	if err != nil {
		return fmt.Errorf("submit: follow job: %w", err)
	}
	defer sub.Unsubscribe()
	var reply node.SubmitReply
	if *coordinator != "" {
		err = node.Request(nc, node.CmdSubject(*coordinator), node.Cmd{Kind: node.CmdSubmit, Job: job, Args: jobArgs}, &reply, submitTimeout)
	} else {
		err = node.Request(nc, node.SubmitSubject, node.SubmitRequest{Job: job, Args: jobArgs}, &reply, submitTimeout)
	}
	if errors.Is(err, nats.ErrNoResponders) {
		return fmt.Errorf("submit %s: no node answered: is a `node start` running and reachable at the --nats URL?", job)
	}
	if err != nil {
		return fmt.Errorf("submit %s: %w", job, err)
	}
	if reply.Error != "" {
		return fmt.Errorf("submit %s: %s", job, reply.Error)
	}
	fmt.Fprintf(stderr, "job %s accepted; coordinator: node %s\n", job, reply.Coordinator)
	if *detach {
		fmt.Fprintf(stdout, "%s submitted (coordinator %s)\n", job, reply.Coordinator)
		return nil
	}
	return follow(ctx, nc, job, events, stdout, stderr)
}

// follow prints a job's progress until it ends and turns its end into the
// command's result. The job registry is polled too, so an end published
// while the coordinator changed is not missed.
func follow(ctx context.Context, nc *nats.Conn, job string, events <-chan *nats.Msg, stdout, stderr io.Writer) error {
	js, err := jetstream.New(nc)
	if err != nil {
		return fmt.Errorf("follow %s: %w", job, err)
	}
	jobs, err := cluster.OpenJobs(ctx, js, cluster.DefaultJobBucket)
	if err != nil {
		return fmt.Errorf("follow %s: %w", job, err)
	}
	poll := time.NewTicker(3 * time.Second)
	defer poll.Stop()
	for {
		select {
		case <-ctx.Done():
			fmt.Fprintf(stderr, "detached from job %s; it keeps running (node status, node cancel %s)\n", job, job)
			return nil
		case m := <-events:
			ev, err := decodeEvent(m)
			if err != nil {
				fmt.Fprintf(stderr, "bad job event: %v\n", err)
				continue
			}
			if ev.State == cluster.JobRunning {
				fmt.Fprintf(stderr, "job %s running on coordinator %s: %d checkpoints (latest %d), %d restarts, %.1f s\n",
					job, ev.Coordinator, ev.Checkpoints, ev.Latest, ev.Restarts, ev.ElapsedS)
				continue
			}
			return ended(job, ev.State, ev.Error, ev.ElapsedS, stdout)
		case <-poll.C:
			qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			rec, _, err := jobs.Get(qctx, job)
			cancel()
			if err == nil && rec.State != cluster.JobRunning {
				return ended(job, rec.State, rec.Error, 0, stdout)
			}
		}
	}
}

// ended reports a job's end: nil when it finished, an error otherwise. A
// finished job's run time (from its coordinator taking it to its end, as
// the coordinator measured it) is printed when known (elapsedS > 0).
func ended(job, state, reason string, elapsedS float64, stdout io.Writer) error {
	switch state {
	case cluster.JobFinished:
		if elapsedS > 0 {
			fmt.Fprintf(stdout, "job %s finished in %.3f s\n", job, elapsedS)
		} else {
			fmt.Fprintf(stdout, "job %s finished\n", job)
		}
		return nil
	case cluster.JobCancelled:
		return fmt.Errorf("job %s was cancelled", job)
	}
	return fmt.Errorf("job %s failed: %s", job, reason)
}

// decodeEvent reads a job event envelope.
func decodeEvent(m *nats.Msg) (node.JobEvent, error) {
	var ev node.JobEvent
	e, err := transport.FromMsg(m)
	if err != nil {
		return ev, err
	}
	if err := msgpack.Unmarshal(e.Payload, &ev); err != nil {
		return ev, fmt.Errorf("decode job event on %s: %w", m.Subject, err)
	}
	return ev, nil
}
