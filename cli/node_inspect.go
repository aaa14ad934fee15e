package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/weirstream/weir/transport"
)

// inspect is `node inspect [SUBJECT]`.
func (r *registry) inspect(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cf := newClientCommand(nil, "inspect", "node inspect [SUBJECT]",
		"Prints the messages on SUBJECT (default weir.>) decoded to JSON lines: type,\nchannel, sequence, checkpoint, record count and the first records.")
	maxRecords := cf.fs.Int("records", 3, "records shown per buffer")
	limit := cf.fs.Duration("for", 0, "stop after this long (0: until interrupted)")
	pos, help, err := cf.parse(args, stdout)
	if help || err != nil {
		return err
	}
	if len(pos) > 1 {
		return usagef("inspect: want at most one subject")
	}
	if *maxRecords < 0 || *limit < 0 {
		return usagef("inspect: --records and --for must not be negative")
	}
	subject := transport.AllWildcard
	if len(pos) == 1 {
		subject = pos[0]
	}
	nc, err := cf.connect("weir inspect")
	if err != nil {
		return fmt.Errorf("inspect: %w", err)
	}
	defer nc.Close()
	if *limit > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *limit)
		defer cancel()
	}
	return transport.Inspect(ctx, nc, subject, stdout, *maxRecords)
}
