package nexmark

import (
	"slices"
	"sort"
)

// The straightforward implementations the queries are checked against:
// plain loops over the same generated events, no runtime.

func refEvents(gen *Generator, n int64) []Event {
	out := make([]Event, n)
	for i := range n {
		out[i] = gen.Event(i)
	}
	return out
}

func refQ1(events []Event) []Bid {
	var out []Bid
	for _, e := range events {
		if e.Kind == KindBid {
			b := e.Bid
			b.Price = b.Price * 89 / 100
			out = append(out, b)
		}
	}
	return out
}

func refQ2(events []Event) []AuctionPrice {
	var out []AuctionPrice
	for _, e := range events {
		if e.Kind == KindBid && e.Bid.Auction%123 == 0 {
			out = append(out, AuctionPrice{e.Bid.Auction, e.Bid.Price})
		}
	}
	return out
}

func refQ3(events []Event) []NameCityStateID {
	sellers := map[int64]*Person{}
	for _, e := range events {
		if e.Kind == KindPerson && (e.Person.State == "OR" || e.Person.State == "ID" || e.Person.State == "CA") {
			sellers[e.Person.ID] = e.Person
		}
	}
	var out []NameCityStateID
	for _, e := range events {
		if e.Kind == KindAuction && e.Auction.Category == 10 {
			if p, ok := sellers[e.Auction.Seller]; ok {
				out = append(out, NameCityStateID{p.Name, p.City, p.State, e.Auction.ID})
			}
		}
	}
	return out
}

// refQ4 is the final average per category and how many winners in all.
func refQ4(events []Event) (map[int64]CategoryPrice, int) {
	out := map[int64]CategoryPrice{}
	winners := 0
	for _, e := range events {
		if e.Kind != KindAuction {
			continue
		}
		a := e.Auction
		var best *Bid
		for j := range events {
			b := &events[j].Bid
			if events[j].Kind != KindBid || b.Auction != a.ID {
				continue
			}
			if b.DateTime >= a.DateTime && b.DateTime <= a.Expires && b.Price >= a.Reserve {
				if best == nil || b.Price > best.Price || (b.Price == best.Price && (b.DateTime < best.DateTime ||
					(b.DateTime == best.DateTime && b.Bidder < best.Bidder))) {
					best = b
				}
			}
		}
		if best == nil {
			continue
		}
		winners++
		c := out[a.Category]
		c.Category = a.Category
		c.Auctions++
		c.Total += best.Price
		c.Average = c.Total / c.Auctions
		out[a.Category] = c
	}
	return out, winners
}

func refQ5(events []Event, size, period int64) []HotItems {
	counts := map[[2]int64]map[int64]int64{} // window → auction → bids
	for _, e := range events {
		if e.Kind != KindBid {
			continue
		}
		ts := e.Bid.DateTime
		for start := ts - ts%period; start > ts-size; start -= period {
			w := [2]int64{start, start + size}
			if counts[w] == nil {
				counts[w] = map[int64]int64{}
			}
			counts[w][e.Bid.Auction]++
		}
	}
	var out []HotItems
	for w, byAuction := range counts {
		h := HotItems{Start: w[0], End: w[1]}
		for a, c := range byAuction {
			if c > h.Bids {
				h.Bids, h.Auctions = c, nil
			}
			if c == h.Bids {
				h.Auctions = append(h.Auctions, a)
			}
		}
		slices.Sort(h.Auctions)
		out = append(out, h)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Start < out[j].Start })
	return out
}

func refQ7(events []Event, size int64) []HighestBids {
	byWindow := map[int64]*HighestBids{}
	for _, e := range events {
		if e.Kind != KindBid {
			continue
		}
		start := e.Bid.DateTime - e.Bid.DateTime%size
		h := byWindow[start]
		if h == nil {
			h = &HighestBids{Start: start, End: start + size, Price: -1}
			byWindow[start] = h
		}
		if e.Bid.Price > h.Price {
			h.Price, h.Bids = e.Bid.Price, nil
		}
		if e.Bid.Price == h.Price {
			h.Bids = append(h.Bids, e.Bid)
		}
	}
	var out []HighestBids
	for _, h := range byWindow {
		sort.Slice(h.Bids, func(i, j int) bool {
			a, b := h.Bids[i], h.Bids[j]
			if a.DateTime != b.DateTime {
				return a.DateTime < b.DateTime
			}
			if a.Bidder != b.Bidder {
				return a.Bidder < b.Bidder
			}
			return a.Auction < b.Auction
		})
		out = append(out, *h)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Start < out[j].Start })
	return out
}

func refQ8(events []Event, size int64) []NewSeller {
	sold := map[[2]int64]bool{} // seller, window start
	for _, e := range events {
		if e.Kind == KindAuction {
			sold[[2]int64{e.Auction.Seller, e.Auction.DateTime - e.Auction.DateTime%size}] = true
		}
	}
	var out []NewSeller
	for _, e := range events {
		if e.Kind == KindPerson {
			start := e.Person.DateTime - e.Person.DateTime%size
			if sold[[2]int64{e.Person.ID, start}] {
				out = append(out, NewSeller{ID: e.Person.ID, Name: e.Person.Name, Start: start})
			}
		}
	}
	return out
}

// refSession is a bidder's session: [Start, End) in Unix ms and its bids.
type refSession struct{ Bidder, Start, End, Bids int64 }

func refQ11(events []Event, gap int64) []refSession {
	times := map[int64][]int64{}
	for _, e := range events {
		if e.Kind == KindBid {
			times[e.Bid.Bidder] = append(times[e.Bid.Bidder], e.Bid.DateTime)
		}
	}
	var out []refSession
	for bidder, ts := range times {
		slices.Sort(ts)
		cur := refSession{Bidder: bidder, Start: ts[0], End: ts[0] + gap, Bids: 1}
		for _, t := range ts[1:] {
			if t >= cur.End {
				out = append(out, cur)
				cur = refSession{Bidder: bidder, Start: t, End: t + gap}
			}
			cur.End = max(cur.End, t+gap)
			cur.Bids++
		}
		out = append(out, cur)
	}
	return out
}
