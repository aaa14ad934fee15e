package nexmark

import "github.com/weirstream/weir"

// Q0 is pass-through: every event through one map, a measure of the
// runtime's own cost.
func Q0(events weir.Stream[Event]) weir.Stream[Event] {
	return weir.Map(events, "q0", func(e Event) Event { return e })
}
