package nexmark

import (
	"math"
	"time"

	"github.com/weirstream/weir"
)

// WinningBid is a closed auction's winning bid: the highest bid at or above
// the reserve made while the auction was open (the earliest of equal bids,
// then the lowest bidder).
type WinningBid struct {
	Auction  Auction `msgpack:"auction" json:"auction"`
	Bid      Bid     `msgpack:"bid" json:"bid"`
	HasPrice bool    `msgpack:"has" json:"-"`
}

// CategoryPrice is Q4's output: after each closed auction with a winner,
// the average winning price of its category so far.
type CategoryPrice struct {
	Category int64 `msgpack:"category" json:"category"`
	Auctions int64 `msgpack:"auctions" json:"auctions"` // closed with a winner
	Total    int64 `msgpack:"total" json:"total"`       // of their winning prices
	Average  int64 `msgpack:"average" json:"average"`   // Total / Auctions
}

// Beats reports whether bid a wins over bid b.
func Beats(a, b Bid) bool {
	if a.Price != b.Price {
		return a.Price > b.Price
	}
	if a.DateTime != b.DateTime {
		return a.DateTime < b.DateTime
	}
	return a.Bidder < b.Bidder
}

// Valid reports whether bid b can win auction a: made while it was open,
// at or above its reserve.
func Valid(a Auction, b Bid) bool {
	return b.DateTime >= a.DateTime && b.DateTime <= a.Expires && b.Price >= a.Reserve
}

// WinningBids joins auctions with their bids in event time and emits each
// auction with a winner once the watermark passes its expiry. A bid that
// arrives before its auction waits for it until the watermark passes the
// bid's own time (the auction, if it is older than the bid, has arrived by
// then).
func WinningBids(events weir.Stream[Event]) weir.Stream[WinningBid] {
	auctions := Auctions(events, "q4-auctions", nil)
	bids := Bids(events)
	open := weir.NewValueState[WinningBid](events.Graph(), "open-auction")
	early := weir.NewListState[Bid](events.Graph(), "early-bids")
	cs := weir.Connect(weir.KeyBy(auctions, func(a Auction) int64 { return a.ID }),
		weir.KeyBy(bids, func(b Bid) int64 { return b.Auction }))
	offer := func(w *WinningBid, b Bid) {
		if Valid(w.Auction, b) && (!w.HasPrice || Beats(b, w.Bid)) {
			w.Bid, w.HasPrice = b, true
		}
	}
	return weir.CoProcess(cs, "q4-winning-bids", weir.CoFunctions[Auction, Bid, int64, WinningBid]{
		OnA: func(ctx *weir.KeyedContext[int64], a Auction, _ *weir.Emitter[WinningBid]) error {
			w := WinningBid{Auction: a}
			for _, b := range early.Get(ctx) {
				offer(&w, b)
			}
			early.Clear(ctx)
			open.Set(ctx, w)
			ctx.Timers().RegisterEventTime(time.UnixMilli(a.Expires))
			return nil
		},
		OnB: func(ctx *weir.KeyedContext[int64], b Bid, _ *weir.Emitter[WinningBid]) error {
			w, ok := open.Value(ctx)
			if !ok {
				// One timer per key stands for the waiting bids: set with the
				// first, moved to the earliest one left each time it fires.
				if len(early.Get(ctx)) == 0 {
					ctx.Timers().RegisterEventTime(time.UnixMilli(b.DateTime))
				}
				early.Add(ctx, b)
				return nil
			}
			if Valid(w.Auction, b) && (!w.HasPrice || Beats(b, w.Bid)) {
				w.Bid, w.HasPrice = b, true
				open.Set(ctx, w)
			}
			return nil
		},
		OnTimer: func(ctx *weir.KeyedContext[int64], t weir.Timer, out *weir.Emitter[WinningBid]) error {
			at := t.At.UnixMilli()
			w, ok := open.Value(ctx)
			if !ok { // the bids that came before their auction: none can win now
				waiting := early.Get(ctx)
				keep := waiting[:0:0]
				next := int64(math.MaxInt64)
				for _, b := range waiting {
					if b.DateTime > at {
						keep = append(keep, b)
						next = min(next, b.DateTime)
					}
				}
				if len(keep) == len(waiting) && len(keep) > 0 {
					return nil // a later timer, set when the list was last empty, stands for them
				}
				early.Clear(ctx)
				for _, b := range keep {
					early.Add(ctx, b)
				}
				if len(keep) > 0 {
					ctx.Timers().RegisterEventTime(time.UnixMilli(next))
				}
				return nil
			}
			if at < w.Auction.Expires {
				return nil
			}
			open.Clear(ctx)
			if w.HasPrice {
				out.Emit(w)
			}
			return nil
		},
	}, weir.WithState(open, early))
}

// Q4 is the average price per category: the winning bids of closed
// auctions, averaged by category, one updated average per winning bid.
func Q4(events weir.Stream[Event]) weir.Stream[CategoryPrice] {
	sums := weir.NewValueState[CategoryPrice](events.Graph(), "category-sum")
	winners := weir.KeyBy(WinningBids(events), func(w WinningBid) int64 { return w.Auction.Category })
	return weir.Process(winners, "q4", func(ctx *weir.KeyedContext[int64], w WinningBid, out *weir.Emitter[CategoryPrice]) error {
		s := sums.Get(ctx)
		s.Category = w.Auction.Category
		s.Auctions++
		s.Total += w.Bid.Price
		s.Average = s.Total / s.Auctions
		sums.Set(ctx, s)
		out.Emit(s)
		return nil
	}, weir.WithState(sums))
}
