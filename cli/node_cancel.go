package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/weirstream/weir/cluster/node"
	"github.com/weirstream/weir/transport"
)

// cancel is `node cancel JOB`.
func (r *registry) cancel(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cf := newClientCommand(nil, "cancel", "node cancel JOB", "Stops a running job without draining it: a stop checkpoint is taken at once (its barrier overtakes queued records, stored with it), the sinks commit it and the job ends; a job submitted again with --restore latest continues from it.")
	pos, help, err := cf.parse(args, stdout)
	if help || err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("cancel: want exactly one job name")
	}
	job := pos[0]
	if err := transport.ValidJob(job); err != nil {
		return usagef("cancel: %v", err)
	}
	nc, err := cf.connect("weir cancel " + job)
	if err != nil {
		return fmt.Errorf("cancel: %w", err)
	}
	defer nc.Close()
	rec, err := runningJob(ctx, nc, job)
	if err != nil {
		return fmt.Errorf("cancel: %w", err)
	}
	var reply node.CmdReply
	err = node.Request(nc, node.CancelSubject, node.CancelRequest{Job: job}, &reply, 5*time.Second)
	if errors.Is(err, nats.ErrNoResponders) || errors.Is(err, nats.ErrTimeout) {
		return fmt.Errorf("cancel: job %s has no live coordinator right now (was %s); retry once a node has taken it over", job, rec.Coordinator)
	}
	if err != nil {
		return fmt.Errorf("cancel: %w", err)
	}
	if reply.Error != "" {
		return fmt.Errorf("cancel: %s", reply.Error)
	}
	fmt.Fprintf(stdout, "job %s cancelled: it stops at a stop checkpoint\n", job)
	return nil
}
