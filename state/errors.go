package state

import "errors"

// Sentinel errors that callers branch on with errors.Is.
var (
	// ErrCorrupt marks a snapshot that is truncated, fails its checksum or
	// does not decode.
	ErrCorrupt = errors.New("state: corrupt snapshot")
	// ErrVersion marks a snapshot written in a format version this code
	// does not read.
	ErrVersion = errors.New("state: unsupported snapshot format version")
	// ErrMismatch marks a well-formed snapshot that belongs elsewhere: another
	// key group, another maxParallelism or another kind of table.
	ErrMismatch = errors.New("state: snapshot does not match target")
	// ErrUnknownTable marks a snapshot holding a table that is not registered.
	ErrUnknownTable = errors.New("state: unknown table")
	// ErrDuplicateTable is returned when a table name is registered twice.
	ErrDuplicateTable = errors.New("state: duplicate table name")
	// ErrGroupRange marks a key group outside [0, maxParallelism).
	ErrGroupRange = errors.New("state: key group out of range")
)
