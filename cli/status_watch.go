package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"
)

// Bounds of `node status --interval`.
const maxWatchInterval = time.Hour

// watchFlags are `node status --watch [--interval D]`.
type watchFlags struct {
	on       bool
	interval time.Duration
	set      bool // --interval was given
}

// addWatchFlags declares --watch and --interval on fs.
func addWatchFlags(fs *flag.FlagSet) *watchFlags {
	w := &watchFlags{}
	fs.BoolVar(&w.on, "watch", false, "print the status again every --interval until interrupted (Ctrl-C)")
	fs.DurationVar(&w.interval, "interval", 2*time.Second, "with --watch: time between refreshes, at least --wait and at most 1h")
	return w
}

// check validates the flags; wait is --wait, the time each refresh takes
// to collect the nodes' answers.
func (w *watchFlags) check(fs *flag.FlagSet, wait time.Duration) error {
	fs.Visit(func(f *flag.Flag) { w.set = w.set || f.Name == "interval" })
	switch {
	case w.set && !w.on:
		return fmt.Errorf("--interval needs --watch")
	case wait <= 0:
		return fmt.Errorf("--wait %v must be positive", wait)
	case w.on && w.interval < wait:
		return fmt.Errorf("--interval %v must be at least --wait %v (the time a refresh collects answers)", w.interval, wait)
	case w.on && w.interval > maxWatchInterval:
		return fmt.Errorf("--interval %v must be at most %v", w.interval, maxWatchInterval)
	}
	return nil
}

// clearScreen moves a terminal's cursor home and clears it.
const clearScreen = "\x1b[H\x1b[2J"

// watchStatus prints the status every interval until ctx ends: on a
// terminal it redraws the screen, elsewhere each refresh starts with a line
// naming its time. A refresh that fails prints its error and the watch goes
// on (a node may be restarting).
func watchStatus(ctx context.Context, w io.Writer, interval time.Duration, refresh func(context.Context) (*clusterStatus, error)) error {
	term := isTerminal(w)
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		st, err := refresh(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if term {
			fmt.Fprint(w, clearScreen)
		}
		fmt.Fprintf(w, "status at %s (every %v; Ctrl-C ends)\n", time.Now().Format("15:04:05"), interval)
		if err != nil {
			fmt.Fprintf(w, "node status: %v\n", err)
		} else if err := writeStatus(w, st); err != nil {
			return err
		}
		if !term {
			fmt.Fprintln(w)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}
