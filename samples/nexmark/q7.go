package nexmark

import (
	"slices"

	"github.com/weirstream/weir"
)

// q7Partitions is how many partial maxima Q7's first stage keeps per
// window (bids are spread over them by auction).
const q7Partitions = 128

// HighestBids is Q7's output: in one tumbling window of WindowSize, the
// highest price and every bid that offered it.
type HighestBids struct {
	Start int64 `msgpack:"start" json:"start"` // Unix ms
	End   int64 `msgpack:"end" json:"end"`
	Price int64 `msgpack:"price" json:"price"`
	Bids  []Bid `msgpack:"bids" json:"bids"` // ordered by time, bidder, auction
}

// maxBids is a highest price and the bids that offered it.
type maxBids struct {
	Price int64 `msgpack:"p"`
	Bids  []Bid `msgpack:"b"`
}

// addMax folds the bids of b into a.
func addMax(a maxBids, bids []Bid, price int64) maxBids {
	switch {
	case len(bids) == 0 || price < a.Price:
		return a
	case price > a.Price || len(a.Bids) == 0:
		return maxBids{Price: price, Bids: append([]Bid(nil), bids...)}
	default:
		a.Bids = append(a.Bids, bids...)
		return a
	}
}

// Q7 is the highest bid per tumbling window of WindowSize. The first stage
// keeps each window's highest bids per partition of the auctions
// (incrementally: one accumulator per partition and window), the second
// takes the partitions' results and emits the top when the watermark
// passes the window's end.
func Q7(events weir.Stream[Event]) weir.Stream[HighestBids] {
	byPart := weir.KeyBy(Bids(events), func(b Bid) int64 { return b.Auction % q7Partitions })
	partial := weir.Aggregate(weir.Window(byPart, weir.Tumbling(WindowSize)), "q7-partial", weir.Aggregator[Bid, maxBids, maxBids]{
		Init:   func() maxBids { return maxBids{} },
		Add:    func(a maxBids, b Bid) maxBids { return addMax(a, []Bid{b}, b.Price) },
		Merge:  func(a, b maxBids) maxBids { return addMax(a, b.Bids, b.Price) },
		Result: func(a maxBids) maxBids { return a },
	})
	top := weir.NewValueState[maxBids](events.Graph(), "top")
	byWindow := weir.KeyBy(partial, func(r weir.WindowResult[int64, maxBids]) int64 { return r.End.UnixMilli() })
	return weir.ProcessWithTimers(byWindow, "q7", weir.KeyedFunctions[weir.WindowResult[int64, maxBids], int64, HighestBids]{
		OnRecord: func(ctx *weir.KeyedContext[int64], r weir.WindowResult[int64, maxBids], _ *weir.Emitter[HighestBids]) error {
			m, ok := top.Value(ctx)
			if !ok {
				ctx.Timers().RegisterEventTime(ctx.Timestamp())
			}
			top.Set(ctx, addMax(m, r.Value.Bids, r.Value.Price))
			return nil
		},
		OnTimer: func(ctx *weir.KeyedContext[int64], t weir.Timer, out *weir.Emitter[HighestBids]) error {
			m, ok := top.Value(ctx)
			if !ok {
				return nil
			}
			top.Clear(ctx)
			SortBids(m.Bids)
			end := ctx.Key()
			out.Emit(HighestBids{Start: end - WindowSize.Milliseconds(), End: end, Price: m.Price, Bids: m.Bids})
			return nil
		},
	}, weir.WithState(top))
}

// SortBids orders bids by time, bidder, auction.
func SortBids(bids []Bid) {
	slices.SortFunc(bids, func(a, b Bid) int {
		switch {
		case a.DateTime != b.DateTime:
			return cmpInt(a.DateTime, b.DateTime)
		case a.Bidder != b.Bidder:
			return cmpInt(a.Bidder, b.Bidder)
		default:
			return cmpInt(a.Auction, b.Auction)
		}
	})
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
