package actors

import (
	"errors"

	"github.com/weirstream/weir/metrics"
)

// errNoHeartbeat is wrapped by the failure of a task whose node was lost.
var errNoHeartbeat = errors.New("no heartbeat")

// linkError is the failure of tasks whose messages were lost on the wire.
type linkError struct{ reason string }

func (e *linkError) Error() string { return e.reason }

// restartCause classifies a task failure for weir_restarts_total; chaos says
// a chaos kill is pending (the next failure is its doing).
func restartCause(err error, chaos bool) string {
	var le *linkError
	switch {
	case errors.Is(err, errNoHeartbeat):
		return metrics.CauseNodeLost
	case errors.As(err, &le):
		return metrics.CauseLinkFailed
	case chaos:
		return metrics.CauseChaos
	}
	return metrics.CauseTaskFailed
}

// noteCause remembers why region r is about to restart: the first failure
// that stopped it names the cause of its restart.
func (s *jobSupervision) noteCause(r int, cause string) {
	if s.causes == nil {
		s.causes = map[int]string{}
	}
	if _, ok := s.causes[r]; !ok {
		s.causes[r] = cause
	}
}

// takeCause returns and forgets region r's restart cause.
func (s *jobSupervision) takeCause(r int) string {
	c, ok := s.causes[r]
	if !ok {
		return metrics.CauseTaskFailed
	}
	delete(s.causes, r)
	return c
}
