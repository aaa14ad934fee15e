package cluster

import "github.com/rs/zerolog"

// serverLogger routes nats-server logging into zerolog at warning level:
// notices, debug and trace lines are dropped.
type serverLogger struct{ log zerolog.Logger }

// Noticef drops informational server messages.
func (serverLogger) Noticef(string, ...any) {}

// Warnf logs a server warning.
func (l serverLogger) Warnf(format string, v ...any) { l.log.Warn().Msgf(format, v...) }

// Fatalf logs a fatal server error; it never exits the process.
func (l serverLogger) Fatalf(format string, v ...any) {
	l.log.Error().Bool("fatal", true).Msgf(format, v...)
}

// Errorf logs a server error.
func (l serverLogger) Errorf(format string, v ...any) { l.log.Error().Msgf(format, v...) }

// Debugf drops server debug messages.
func (serverLogger) Debugf(string, ...any) {}

// Tracef drops server protocol traces.
func (serverLogger) Tracef(string, ...any) {}
