package cli

import (
	"io"
	"os"

	"github.com/rs/zerolog"
)

// newLogger makes the run's logger on w: zerolog JSON lines, or a console
// writer for people with pretty (coloured only on a terminal).
func newLogger(w io.Writer, level zerolog.Level, pretty bool) zerolog.Logger {
	// Millisecond timestamps: checkpoints and recoveries take milliseconds.
	zerolog.TimeFieldFormat = "2006-01-02T15:04:05.000Z07:00"
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
