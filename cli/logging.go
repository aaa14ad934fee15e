package cli

import (
	"io"
	"os"

	"github.com/rs/zerolog"
)

// init sets the node's log formats once, before any logger runs:
// millisecond timestamps (checkpoints and recoveries take milliseconds) and
// durations as Go duration strings ("159.89ms"), which carry their unit.
func init() {
	zerolog.TimeFieldFormat = "2006-01-02T15:04:05.000Z07:00"
	zerolog.DurationFieldFormat = zerolog.DurationFormatString
}

// newLogger makes the run's logger on w: zerolog JSON lines, or a console
// writer for people with pretty (coloured only on a terminal).
func newLogger(w io.Writer, level zerolog.Level, pretty bool) zerolog.Logger {
	if pretty {
		w = zerolog.ConsoleWriter{Out: w, TimeFormat: "15:04:05", NoColor: !isTerminal(w)}
	}
	return zerolog.New(w).Level(level).With().Timestamp().Logger()
}

// isTerminal reports whether w is a character device such as a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
