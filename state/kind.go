package state

import "strconv"

// Kind says which shape of state a Table holds.
type Kind uint8

// The kinds of table.
const (
	// KindValue is one value per key (ValueTable).
	KindValue Kind = 1
	// KindMap is a map of user keys to user values per key (MapTable).
	KindMap Kind = 2
	// KindList is a list of values per key (ListTable).
	KindList Kind = 3
	// KindTimers is a keyed operator's timers and watermark (TimerTable).
	KindTimers Kind = 4
)

// String returns the kind's lower-case name.
func (k Kind) String() string {
	switch k {
	case KindValue:
		return "value"
	case KindMap:
		return "map"
	case KindList:
		return "list"
	case KindTimers:
		return "timers"
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}
