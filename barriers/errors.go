package barriers

import "errors"

// ErrInvalidConfig is returned by NewAligner for a configuration it cannot run.
var ErrInvalidConfig = errors.New("barriers: invalid config")

// ErrProtocol marks an event that breaks the channel/barrier protocol (a gap in
// sequence numbers, a buffer on a blocked input, a duplicate barrier, an
// in-order barrier that did not follow all of its data, an unknown input).
// The task cannot continue consistently and should fail and recover.
var ErrProtocol = errors.New("barriers: protocol violation")
