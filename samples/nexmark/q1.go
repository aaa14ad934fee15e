package nexmark

import "github.com/weirstream/weir"

// Q1 is currency conversion: every bid with its price in euros (89 cents
// to the dollar, in integer cents as in the benchmark).
func Q1(events weir.Stream[Event]) weir.Stream[Bid] {
	return weir.FlatMap(events, "q1", func(e Event, out *weir.Emitter[Bid]) error {
		if e.Kind == KindBid {
			b := e.Bid
			b.Price = DollarsToEuros(b.Price)
			out.Emit(b)
		}
		return nil
	})
}

// DollarsToEuros converts a price in cents.
func DollarsToEuros(cents int64) int64 { return cents * 89 / 100 }
