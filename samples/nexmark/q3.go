package nexmark

import "github.com/weirstream/weir"

// Q3Category is the category Q3 watches.
const Q3Category = 10

// Q3States are the states whose sellers Q3 reports.
var Q3States = []string{"OR", "ID", "CA"}

// NameCityStateID is Q3's output: a seller in one of Q3States and an
// auction of theirs in Q3Category.
type NameCityStateID struct {
	Name    string `msgpack:"name" json:"name"`
	City    string `msgpack:"city" json:"city"`
	State   string `msgpack:"state" json:"state"`
	Auction int64  `msgpack:"auction" json:"auction"`
}

func q3Seller(p *Person) bool {
	for _, s := range Q3States {
		if p.State == s {
			return true
		}
	}
	return false
}

// Q3 is local item suggestion: an incremental join of persons in Q3States
// with the auctions they sell in Q3Category. Each side waits in keyed state
// for the other: a seller is kept for their later auctions, an auction that
// came before its seller waits for them.
func Q3(events weir.Stream[Event]) weir.Stream[NameCityStateID] {
	persons := Persons(events, "q3-persons", q3Seller)
	auctions := Auctions(events, "q3-auctions", func(a *Auction) bool { return a.Category == Q3Category })
	seller := weir.NewValueState[Person](events.Graph(), "seller")
	waiting := weir.NewListState[int64](events.Graph(), "waiting-auctions")
	match := func(p Person, auction int64) NameCityStateID {
		return NameCityStateID{Name: p.Name, City: p.City, State: p.State, Auction: auction}
	}
	cs := weir.Connect(weir.KeyBy(persons, func(p Person) int64 { return p.ID }),
		weir.KeyBy(auctions, func(a Auction) int64 { return a.Seller }))
	return weir.CoProcess(cs, "q3", weir.CoFunctions[Person, Auction, int64, NameCityStateID]{
		OnA: func(ctx *weir.KeyedContext[int64], p Person, out *weir.Emitter[NameCityStateID]) error {
			seller.Set(ctx, p)
			for _, a := range waiting.Get(ctx) {
				out.Emit(match(p, a))
			}
			waiting.Clear(ctx)
			return nil
		},
		OnB: func(ctx *weir.KeyedContext[int64], a Auction, out *weir.Emitter[NameCityStateID]) error {
			if p, ok := seller.Value(ctx); ok {
				out.Emit(match(p, a.ID))
			} else {
				waiting.Add(ctx, a.ID)
			}
			return nil
		},
	}, weir.WithState(seller, waiting))
}
