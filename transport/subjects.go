package transport

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Subject kinds, as they appear in Subject.Kind.
const (
	KindData      = "data"   // weir.<job>.data.<edge>.<from>.<to>
	KindCredit    = "credit" // weir.<job>.credit.<edge>.<from>.<to>
	KindControl   = "ctl"    // weir.<job>.ctl.<node> and weir.<job>.ctl.coordinator
	KindHeartbeat = "hb"     // weir.node.<node>.hb
	KindCommand   = "cmd"    // weir.node.<node>.cmd
)

// CoordinatorNode is the Node of a parsed CoordinatorSubject.
const CoordinatorNode = "coordinator"

// AllWildcard matches every weir subject.
const AllWildcard = "weir.>"

const (
	rootToken = "weir"
	nodeToken = "node"
)

// ErrBadSubject is wrapped by every ParseSubject error.
var ErrBadSubject = errors.New("not a weir subject")

// Subject is a parsed weir subject. Job is empty for node subjects
// (weir.node.<node>.<kind>); Edge, From and To are set only for data and
// credit subjects.
type Subject struct {
	Job, Kind, Node string
	Edge, From, To  int
}

// DataSubject carries buffers, barriers and end-of-stream on edge number
// edge from producer instance from to consumer instance to. Ids must pass
// ValidJob and numbers must be non-negative; the result is not checked here
// (ParseSubject rejects what is wrong).
func DataSubject(job string, edge, from, to int) string {
	return channelSubject(job, KindData, edge, from, to)
}

// CreditSubject carries credits back from consumer instance to to producer
// instance from. from and to name the channel exactly as in DataSubject, so
// a channel's data and credit subjects differ only in the kind token.
func CreditSubject(job string, edge, from, to int) string {
	return channelSubject(job, KindCredit, edge, from, to)
}

func channelSubject(job, kind string, edge, from, to int) string {
	return rootToken + "." + job + "." + kind + "." + strconv.Itoa(edge) + "." + strconv.Itoa(from) + "." + strconv.Itoa(to)
}

// ControlSubject carries control messages to the part of job on node.
func ControlSubject(job, node string) string {
	return rootToken + "." + job + "." + KindControl + "." + node
}

// CoordinatorSubject carries control messages to the coordinator of job.
func CoordinatorSubject(job string) string {
	return ControlSubject(job, CoordinatorNode)
}

// NodeSubject carries node-level traffic of the given kind (KindHeartbeat,
// KindCommand) for node.
func NodeSubject(node, kind string) string {
	return rootToken + "." + nodeToken + "." + node + "." + kind
}

// JobWildcard matches every subject of job.
func JobWildcard(job string) string {
	return rootToken + "." + job + ".>"
}

// String returns the subject s was parsed from.
func (s Subject) String() string {
	switch {
	case s.Job == "":
		return NodeSubject(s.Node, s.Kind)
	case s.Kind == KindData || s.Kind == KindCredit:
		return channelSubject(s.Job, s.Kind, s.Edge, s.From, s.To)
	default:
		return ControlSubject(s.Job, s.Node)
	}
}

// ParseSubject parses a subject built by one of the constructors above.
// Anything else, including wildcards, non-canonical numbers ("01") and
// invalid ids, is an error naming the subject and wrapping ErrBadSubject.
// A node subject may have any kind that passes ValidName.
func ParseSubject(s string) (Subject, error) {
	bad := func(format string, args ...any) (Subject, error) {
		return Subject{}, fmt.Errorf("subject %q: %s: %w", s, fmt.Sprintf(format, args...), ErrBadSubject)
	}
	t := strings.Split(s, ".")
	if len(t) < 4 || t[0] != rootToken {
		return bad("want weir.<job>.<kind>... or weir.node.<node>.<kind>")
	}
	if t[1] == nodeToken {
		if len(t) != 4 {
			return bad("node subject has %d tokens, want 4 (weir.node.<node>.<kind>)", len(t))
		}
		if err := ValidNode(t[2]); err != nil {
			return bad("%v", err)
		}
		if err := ValidName(t[3]); err != nil {
			return bad("kind: %v", err)
		}
		return Subject{Kind: t[3], Node: t[2]}, nil
	}
	if err := ValidJob(t[1]); err != nil {
		return bad("%v", err)
	}
	switch kind := t[2]; kind {
	case KindData, KindCredit:
		if len(t) != 6 {
			return bad("%s subject has %d tokens, want 6 (weir.<job>.%s.<edge>.<from>.<to>)", kind, len(t), kind)
		}
		var n [3]int
		for i, name := range [3]string{"edge", "from", "to"} {
			v, err := parseIndex(t[3+i])
			if err != nil {
				return bad("%s %q: %v", name, t[3+i], err)
			}
			n[i] = v
		}
		return Subject{Job: t[1], Kind: kind, Edge: n[0], From: n[1], To: n[2]}, nil
	case KindControl:
		if len(t) != 4 {
			return bad("ctl subject has %d tokens, want 4 (weir.<job>.ctl.<node>)", len(t))
		}
		if t[3] != CoordinatorNode {
			if err := ValidNode(t[3]); err != nil {
				return bad("%v", err)
			}
		}
		return Subject{Job: t[1], Kind: kind, Node: t[3]}, nil
	default:
		return bad("unknown kind %q (want data, credit or ctl)", kind)
	}
}

// parseIndex accepts a non-negative decimal int in canonical form.
func parseIndex(tok string) (int, error) {
	v, err := strconv.Atoi(tok)
	if err != nil || v < 0 || strconv.Itoa(v) != tok {
		return 0, errors.New("not a non-negative decimal integer")
	}
	return v, nil
}
