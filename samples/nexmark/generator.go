package nexmark

import (
	"math"
)

// Generator makes the Nexmark event stream: event i is a pure function of
// the configuration and i, so any split of the indices can be generated
// independently and a replay after a failure gives the same events.
type Generator struct {
	cfg        Config
	baseMs     int64
	delayNs    int64 // event time between consecutive events
	auctionLen int64 // events until the auction InFlightAuctions ahead
}

// NewGenerator makes a generator of cfg.
func NewGenerator(cfg Config) (*Generator, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Generator{
		cfg:        cfg,
		baseMs:     cfg.Base.UnixMilli(),
		delayNs:    int64(1e9) / int64(cfg.Rate),
		auctionLen: int64(cfg.InFlightAuctions) * totalProportion / AuctionProportion,
	}, nil
}

// TimeOf is the event time (Unix ms) of event i.
func (g *Generator) TimeOf(i int64) int64 { return g.baseMs + i*g.delayNs/1e6 }

// KindOf is the kind of event i: of every 50, the first is a person, the
// next three auctions, the rest bids.
func KindOf(i int64) Kind {
	switch r := i % totalProportion; {
	case r < PersonProportion:
		return KindPerson
	case r < PersonProportion+AuctionProportion:
		return KindAuction
	default:
		return KindBid
	}
}

// Event is event i.
func (g *Generator) Event(i int64) Event {
	r := newRand(g.cfg.Seed, i)
	ts := g.TimeOf(i)
	switch KindOf(i) {
	case KindPerson:
		return Event{Kind: KindPerson, Person: g.person(i, &r, ts)}
	case KindAuction:
		return Event{Kind: KindAuction, Auction: g.auction(i, &r, ts)}
	default:
		return Event{Kind: KindBid, Bid: g.bid(i, &r, ts)}
	}
}

// lastPerson is the base-0 id of the newest person at event i.
func lastPerson(i int64) int64 {
	epoch, offset := i/totalProportion, i%totalProportion
	if offset >= PersonProportion {
		offset = PersonProportion - 1
	}
	return epoch*PersonProportion + offset
}

// lastAuction is the base-0 id of the newest auction at event i.
func lastAuction(i int64) int64 {
	epoch, offset := i/totalProportion, i%totalProportion
	switch {
	case offset < PersonProportion:
		epoch--
		offset = AuctionProportion - 1
	case offset >= PersonProportion+AuctionProportion:
		offset = AuctionProportion - 1
	default:
		offset -= PersonProportion
	}
	return epoch*AuctionProportion + offset
}

// activePerson is a random base-0 id among the active people at event i
// (or a few beyond the newest).
func (g *Generator) activePerson(i int64, r *rnd) int64 {
	people := lastPerson(i) + 1
	active := min(people, int64(g.cfg.ActivePeople))
	return people - active + r.intn(active+personIDLead)
}

// inFlightAuction is a random base-0 id among the in-flight auctions at
// event i (or a few beyond the newest).
func (g *Generator) inFlightAuction(i int64, r *rnd) int64 {
	newest := lastAuction(i)
	oldest := max(newest-int64(g.cfg.InFlightAuctions), 0)
	return oldest + r.intn(newest-oldest+1+auctionIDLead)
}

func (g *Generator) person(i int64, r *rnd, ts int64) *Person {
	p := &Person{
		ID:       lastPerson(i) + FirstPersonID,
		Name:     personNames[r.intn(int64(len(personNames)))],
		City:     cities[r.intn(int64(len(cities)))],
		State:    usStates[r.intn(int64(len(usStates)))],
		DateTime: ts,
	}
	p.EmailAddress = r.text(7) + "@" + r.text(5) + ".com"
	p.CreditCard = r.creditCard()
	size := 8 + len(p.Name) + len(p.EmailAddress) + len(p.CreditCard) + len(p.City) + len(p.State) + 8
	p.Extra = r.extra(size, avgPersonBytes)
	return p
}

func (g *Generator) auction(i int64, r *rnd, ts int64) *Auction {
	a := &Auction{ID: lastAuction(i) + FirstAuctionID, DateTime: ts}
	if r.intn(int64(g.cfg.HotSellersRatio)) > 0 {
		a.Seller = lastPerson(i) / hotSellerRatio * hotSellerRatio
	} else {
		a.Seller = g.activePerson(i, r)
	}
	a.Seller += FirstPersonID
	a.Category = FirstCategoryID + r.intn(NumCategories)
	a.InitialBid = r.price()
	a.Reserve = a.InitialBid + r.price()
	// An auction lasts up to twice the event time until the auction
	// InFlightAuctions later is made.
	horizon := g.TimeOf(i+g.auctionLen) - ts
	a.Expires = ts + 1 + r.intn(max(2*horizon, 1))
	a.ItemName = r.text(20)
	a.Description = r.text(100)
	size := 8 + len(a.ItemName) + len(a.Description) + 8 + 8 + 8 + 8 + 8
	a.Extra = r.extra(size, avgAuctionBytes)
	return a
}

func (g *Generator) bid(i int64, r *rnd, ts int64) Bid {
	b := Bid{DateTime: ts}
	if r.intn(int64(g.cfg.HotAuctionRatio)) > 0 {
		b.Auction = lastAuction(i) / hotAuctionRatio * hotAuctionRatio
	} else {
		b.Auction = g.inFlightAuction(i, r)
	}
	if r.intn(int64(g.cfg.HotBiddersRatio)) > 0 {
		b.Bidder = lastPerson(i)/hotBidderRatio*hotBidderRatio + 1
	} else {
		b.Bidder = g.activePerson(i, r)
	}
	b.Auction += FirstAuctionID
	b.Bidder += FirstPersonID
	b.Price = r.price()
	if r.intn(10) > 0 {
		c := r.intn(int64(len(hotChannels)))
		b.Channel, b.URL = hotChannels[c], hotURLs[c]
	} else {
		c := r.intn(numChannels)
		b.Channel, b.URL = channelNames[c], channelURLs[c]
	}
	b.Extra = r.extra(8*4+len(b.Channel)+len(b.URL), avgBidBytes)
	return b
}

// rnd is a small seeded random stream (splitmix64), one per event.
type rnd struct{ s uint64 }

// newRand starts event i's random stream.
func newRand(seed, i int64) rnd {
	return rnd{s: mix(uint64(seed)*0xD1B54A32D192ED03 ^ uint64(i))}
}

// mix is splitmix64's finaliser.
func mix(z uint64) uint64 {
	z += 0x9E3779B97F4A7C15
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

func (r *rnd) next() uint64 {
	r.s += 0x9E3779B97F4A7C15
	z := r.s
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

// intn is uniform in [0, n) for n ≥ 1.
func (r *rnd) intn(n int64) int64 { return int64(r.next() % uint64(n)) }

// float is uniform in [0, 1).
func (r *rnd) float() float64 { return float64(r.next()>>11) / (1 << 53) }

// price is the benchmark's price distribution: 10^(6u) dollars' cents,
// from 1 dollar to a million, log-uniform.
func (r *rnd) price() int64 { return int64(math.Round(math.Pow(10, r.float()*6) * 100)) }

// text is a random lower-case string of 3 … maxLen-1 letters (a substring
// of a fixed pool: no allocation).
func (r *rnd) text(maxLen int) string {
	n := 3 + r.intn(int64(maxLen-3))
	return exactText(r, n)
}

// exactText is a random string of n letters from the pool.
func exactText(r *rnd, n int64) string {
	start := r.intn(int64(len(textPool)) - n + 1)
	return textPool[start : start+n]
}

// extra pads an event of size bytes to about avg: a random string of
// avg-size ±20 %, or none when the event is big enough already.
func (r *rnd) extra(size, avg int) string {
	if size >= avg {
		return ""
	}
	want := int64(avg - size)
	delta := want / 5
	return exactText(r, want-delta+r.intn(2*delta+1))
}

// creditCard is four groups of four digits.
func (r *rnd) creditCard() string {
	var b [19]byte
	for g := range 4 {
		v := r.intn(10000)
		for d := 3; d >= 0; d-- {
			b[g*5+d] = byte('0' + v%10)
			v /= 10
		}
		if g < 3 {
			b[g*5+4] = ' '
		}
	}
	return string(b[:])
}
