package nexmark

import "github.com/weirstream/weir"

// Q2AuctionSkip selects the auctions Q2 reports: those whose id is a
// multiple of it.
const Q2AuctionSkip = 123

// AuctionPrice is Q2's output: a bid's auction and price.
type AuctionPrice struct {
	Auction int64 `msgpack:"auction" json:"auction"`
	Price   int64 `msgpack:"price" json:"price"`
}

// Q2 is selection: the auction and price of the bids on every
// Q2AuctionSkip-th auction.
func Q2(events weir.Stream[Event]) weir.Stream[AuctionPrice] {
	return weir.FlatMap(events, "q2", func(e Event, out *weir.Emitter[AuctionPrice]) error {
		if e.Kind == KindBid && e.Bid.Auction%Q2AuctionSkip == 0 {
			out.Emit(AuctionPrice{Auction: e.Bid.Auction, Price: e.Bid.Price})
		}
		return nil
	})
}
