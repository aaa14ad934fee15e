package nexmark

import (
	"time"

	"github.com/weirstream/weir"
)

// NewSeller is Q8's output: a person who joined and put up an auction in
// the same tumbling window of WindowSize.
type NewSeller struct {
	ID    int64  `msgpack:"id" json:"id"`
	Name  string `msgpack:"name" json:"name"`
	Start int64  `msgpack:"start" json:"start"` // the window's, Unix ms
}

// Q8 is monitor new users: a window join of the persons (by id) with the
// auctions (by seller) in tumbling event-time windows of WindowSize; each
// person with an auction in their window once.
func Q8(events weir.Stream[Event]) weir.Stream[NewSeller] {
	persons := weir.KeyBy(Persons(events, "q8-persons", nil), func(p Person) int64 { return p.ID })
	auctions := weir.KeyBy(Auctions(events, "q8-auctions", nil), func(a Auction) int64 { return a.Seller })
	return weir.WindowJoin(weir.Connect(persons, auctions), weir.Tumbling(WindowSize), "q8",
		func(_ int64, start, _ time.Time, ps []Person, _ []Auction, out *weir.Emitter[NewSeller]) error {
			for _, p := range ps {
				out.Emit(NewSeller{ID: p.ID, Name: p.Name, Start: start.UnixMilli()})
			}
			return nil
		})
}
