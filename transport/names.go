package transport

import (
	"errors"
	"fmt"
)

// MaxNameLen is the longest job or node id allowed.
const MaxNameLen = 64

// ErrBadName is wrapped by every error from ValidName, ValidJob and ValidNode.
var ErrBadName = errors.New("invalid weir name")

// ValidName checks a job or node id: 1 to 64 characters from A-Z a-z 0-9 _ -.
// Such a name is exactly one NATS subject token: no dots, no wildcards, no
// spaces.
func ValidName(s string) error {
	if s == "" {
		return fmt.Errorf("name is empty: %w", ErrBadName)
	}
	if len(s) > MaxNameLen {
		return fmt.Errorf("name %.20q... is %d bytes long, at most %d allowed: %w", s, len(s), MaxNameLen, ErrBadName)
	}
	for i, r := range s {
		if !nameChar(r) {
			return fmt.Errorf("name %q: character %q at offset %d is not allowed (only A-Z a-z 0-9 _ -): %w", s, r, i, ErrBadName)
		}
	}
	return nil
}

// ValidJob is ValidName for a job id; it also rejects "node", which would
// collide with the weir.node.* subjects.
func ValidJob(s string) error {
	if err := ValidName(s); err != nil {
		return fmt.Errorf("job id: %w", err)
	}
	if s == nodeToken {
		return fmt.Errorf("job id %q is reserved (weir.node.* carries node traffic): %w", s, ErrBadName)
	}
	return nil
}

// ValidNode is ValidName for a node id; it also rejects "coordinator", which
// would collide with CoordinatorSubject.
func ValidNode(s string) error {
	if err := ValidName(s); err != nil {
		return fmt.Errorf("node id: %w", err)
	}
	if s == CoordinatorNode {
		return fmt.Errorf("node id %q is reserved (weir.<job>.ctl.coordinator is the coordinator): %w", s, ErrBadName)
	}
	return nil
}

func nameChar(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-'
}
