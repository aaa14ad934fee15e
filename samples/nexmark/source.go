package nexmark

import (
	"time"

	"github.com/weirstream/weir"
)

// Source adds the Nexmark events 0 … n-1 of gen (or without end with
// weir.Unbounded) as a source with event time: each source instance
// produces its events in time order, so the watermark follows the newest
// event with no slack.
func Source(g *weir.Graph, gen *Generator, n int64, opts ...weir.OpOption) weir.Stream[Event] {
	events := weir.Generate(g, "events", n, gen.Event, opts...)
	return weir.WithTimestamps(events, "timestamps", eventTime, weir.BoundedOutOfOrderness(0))
}

func eventTime(e Event) time.Time { return time.UnixMilli(e.Time()) }

// Bids is the bids of the stream, with their event time.
func Bids(events weir.Stream[Event]) weir.Stream[Bid] {
	bids := weir.FlatMap(events, "bids", func(e Event, out *weir.Emitter[Bid]) error {
		if e.Kind == KindBid {
			out.Emit(e.Bid)
		}
		return nil
	})
	return weir.Timestamped(bids, func(b Bid) time.Time { return time.UnixMilli(b.DateTime) })
}

// Persons is the new persons of the stream whose state keep accepts (all
// with a nil keep), with their event time.
func Persons(events weir.Stream[Event], name string, keep func(*Person) bool) weir.Stream[Person] {
	persons := weir.FlatMap(events, name, func(e Event, out *weir.Emitter[Person]) error {
		if e.Kind == KindPerson && (keep == nil || keep(e.Person)) {
			out.Emit(*e.Person)
		}
		return nil
	})
	return weir.Timestamped(persons, func(p Person) time.Time { return time.UnixMilli(p.DateTime) })
}

// Auctions is the new auctions of the stream that keep accepts (all with a
// nil keep), with their event time.
func Auctions(events weir.Stream[Event], name string, keep func(*Auction) bool) weir.Stream[Auction] {
	auctions := weir.FlatMap(events, name, func(e Event, out *weir.Emitter[Auction]) error {
		if e.Kind == KindAuction && (keep == nil || keep(e.Auction)) {
			out.Emit(*e.Auction)
		}
		return nil
	})
	return weir.Timestamped(auctions, func(a Auction) time.Time { return time.UnixMilli(a.DateTime) })
}
