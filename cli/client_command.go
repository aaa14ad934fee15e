package cli

import (
	"errors"
	"flag"
	"io"

	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"

	"github.com/weirstream/weir/cluster"
)

// clientCommand is what the cluster client commands (submit, status,
// cancel, inspect) share: the NATS connection flags, parsing flags before
// and after arguments, --help and one-line usage errors.
type clientCommand struct {
	name, usage, about string
	fs                 *flag.FlagSet
	conn               cluster.ConnOptions
}

// newClientCommand declares the connection flags on fs (nil: a new set).
func newClientCommand(fs *flag.FlagSet, name, usage, about string) *clientCommand {
	if fs == nil {
		fs = flag.NewFlagSet("node "+name, flag.ContinueOnError)
		fs.SetOutput(io.Discard)
	}
	c := &clientCommand{name: name, usage: usage, about: about, fs: fs}
	cluster.RegisterConnFlags(fs, &c.conn)
	return c
}

// parse parses args and returns the positional arguments; after --help
// (written to stdout) it returns help = true.
func (c *clientCommand) parse(args []string, stdout io.Writer) (pos []string, help bool, err error) {
	pos, err = parseInterleaved(c.fs, args)
	if errors.Is(err, flag.ErrHelp) {
		writeFlagHelp(stdout, c.usage, c.about, c.fs)
		return nil, true, nil
	}
	if err != nil {
		return nil, false, usagef("%s: %s (run 'node %s --help' for the flags)", c.name, doubleDash(err), c.name)
	}
	return pos, false, nil
}

// connect joins the cluster's NATS as a client named name.
func (c *clientCommand) connect(name string) (*nats.Conn, error) {
	c.conn.Name = name
	return c.conn.Connect(zerolog.Nop())
}
