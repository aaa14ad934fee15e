package nexmark

import "github.com/weirstream/weir"

// SessionGap ends a bidder's session in Q11.
const SessionGap = WindowSize

// BidderSession is Q11's output: one session of a bidder and its bid count.
type BidderSession = weir.WindowResult[int64, int64]

// Q11 is user sessions: each bidder's bids counted per session window (a
// session ends after SessionGap without a bid).
func Q11(events weir.Stream[Event]) weir.Stream[BidderSession] {
	byBidder := weir.KeyBy(Bids(events), func(b Bid) int64 { return b.Bidder })
	return weir.Aggregate(weir.Window(byBidder, weir.Session(SessionGap)), "q11", weir.Count[Bid]())
}
