package nexmark

import (
	"time"

	"github.com/weirstream/weir"
)

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

// Q3StateTTL is how long, in event time, Q3 keeps a seller for their
// later auctions and an auction for its seller: Beam's Nexmark Query3
// expires a person's state that long after the person's time
// (maxAuctionsWaitingTime, 600 s by default). The generator's sellers are
// among the newest ActivePeople people (and the hot seller among the newest
// hundred), so with the default configuration every match happens within
// seconds of event time and the TTL loses none.
const Q3StateTTL = 600 * time.Second

// Q3 is local item suggestion: an incremental join of persons in Q3States
// with the auctions they sell in Q3Category. Each side waits in keyed state
// for the other for Q3StateTTL of event time: a seller is kept for their
// later auctions, an auction that came before its seller waits for them.
func Q3(events weir.Stream[Event]) weir.Stream[NameCityStateID] {
	return q3Within(events, Q3StateTTL)
}

// waitingAuction is an auction waiting for its seller, until Expires (Unix
// ms of event time).
type waitingAuction struct {
	ID      int64 `msgpack:"id"`
	Expires int64 `msgpack:"expires"`
}

// q3Within is Q3 keeping each side's state for ttl of event time: an
// event-time timer at a record's time plus ttl clears what has expired.
func q3Within(events weir.Stream[Event], ttl time.Duration) weir.Stream[NameCityStateID] {
	persons := Persons(events, "q3-persons", q3Seller)
	auctions := Auctions(events, "q3-auctions", func(a *Auction) bool { return a.Category == Q3Category })
	seller := weir.NewValueState[Person](events.Graph(), "seller")
	waiting := weir.NewListState[waitingAuction](events.Graph(), "waiting-auctions")
	ttlMs := ttl.Milliseconds()
	match := func(p Person, auction int64) NameCityStateID {
		return NameCityStateID{Name: p.Name, City: p.City, State: p.State, Auction: auction}
	}
	cs := weir.Connect(weir.KeyBy(persons, func(p Person) int64 { return p.ID }),
		weir.KeyBy(auctions, func(a Auction) int64 { return a.Seller }))
	return weir.CoProcess(cs, "q3", weir.CoFunctions[Person, Auction, int64, NameCityStateID]{
		OnA: func(ctx *weir.KeyedContext[int64], p Person, out *weir.Emitter[NameCityStateID]) error {
			for _, a := range waiting.Get(ctx) {
				out.Emit(match(p, a.ID))
			}
			waiting.Clear(ctx)
			seller.Set(ctx, p)
			ctx.Timers().RegisterEventTime(time.UnixMilli(p.DateTime + ttlMs))
			return nil
		},
		OnB: func(ctx *weir.KeyedContext[int64], a Auction, out *weir.Emitter[NameCityStateID]) error {
			if p, ok := seller.Value(ctx); ok {
				out.Emit(match(p, a.ID))
				return nil
			}
			expires := a.DateTime + ttlMs
			waiting.Add(ctx, waitingAuction{ID: a.ID, Expires: expires})
			ctx.Timers().RegisterEventTime(time.UnixMilli(expires))
			return nil
		},
		OnTimer: func(ctx *weir.KeyedContext[int64], t weir.Timer, _ *weir.Emitter[NameCityStateID]) error {
			now := t.At.UnixMilli()
			if p, ok := seller.Value(ctx); ok && p.DateTime+ttlMs <= now {
				seller.Clear(ctx)
			}
			left := waiting.Get(ctx)
			keep := left[:0:0]
			for _, a := range left {
				if a.Expires > now {
					keep = append(keep, a)
				}
			}
			if len(keep) < len(left) {
				waiting.Clear(ctx)
				for _, a := range keep {
					waiting.Add(ctx, a)
				}
			}
			return nil
		},
	}, weir.WithState(seller, waiting))
}
