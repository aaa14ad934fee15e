package nexmark

import (
	"fmt"
	"time"
)

// The benchmark's fixed rules (as in the Beam and Flink Nexmark generators).
const (
	// PersonProportion, AuctionProportion and BidProportion: of every 50
	// events, 1 is a new person, 3 are new auctions and 46 are bids.
	PersonProportion  = 1
	AuctionProportion = 3
	BidProportion     = 46
	totalProportion   = PersonProportion + AuctionProportion + BidProportion

	// FirstPersonID, FirstAuctionID and FirstCategoryID are the first ids.
	FirstPersonID   = 1000
	FirstAuctionID  = 1000
	FirstCategoryID = 10
	// NumCategories is how many categories auctions fall into.
	NumCategories = 5

	// personIDLead and auctionIDLead: a bid may name a person or auction up
	// to this many ids beyond the newest one (data the benchmark expects to
	// arrive out of order).
	personIDLead  = 10
	auctionIDLead = 10
	// hotSellerRatio, hotAuctionRatio, hotBidderRatio: a hot seller, auction
	// or bidder is the newest id rounded down to a multiple of this.
	hotSellerRatio  = 100
	hotAuctionRatio = 100
	hotBidderRatio  = 100

	// Average sizes in bytes the extra padding makes each kind of event.
	avgPersonBytes  = 200
	avgAuctionBytes = 500
	avgBidBytes     = 100
)

// Config is the generator's configuration; DefaultConfig holds the
// benchmark's defaults.
type Config struct {
	Seed int64
	// Base is the event time of event 0.
	Base time.Time
	// Rate is events per second of event time: event i happens at
	// Base + i/Rate.
	Rate int
	// ActivePeople is how many of the newest people bid and sell.
	ActivePeople int
	// InFlightAuctions is how many of the newest auctions get bids.
	InFlightAuctions int
	// HotAuctionRatio, HotSellersRatio and HotBiddersRatio: one bid in
	// HotAuctionRatio goes to a random in-flight auction, the others to the
	// hot one; likewise for sellers and bidders.
	HotAuctionRatio, HotSellersRatio, HotBiddersRatio int
}

// DefaultConfig is the Beam generator's default configuration (10,000
// events per second of event time, one generator), with seed and a fixed
// base time so a run can be repeated.
func DefaultConfig(seed int64) Config {
	return Config{
		Seed:             seed,
		Base:             time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		Rate:             10_000,
		ActivePeople:     1000,
		InFlightAuctions: 100,
		HotAuctionRatio:  2,
		HotSellersRatio:  4,
		HotBiddersRatio:  4,
	}
}

// Validate says what is wrong with c, if anything.
func (c Config) Validate() error {
	switch {
	case c.Rate < 1 || c.Rate > 1_000_000_000:
		return fmt.Errorf("nexmark: rate %d events/s must be in 1 … 1e9", c.Rate)
	case c.ActivePeople < 1:
		return fmt.Errorf("nexmark: active people %d must be ≥ 1", c.ActivePeople)
	case c.InFlightAuctions < 1:
		return fmt.Errorf("nexmark: in-flight auctions %d must be ≥ 1", c.InFlightAuctions)
	case c.HotAuctionRatio < 1 || c.HotSellersRatio < 1 || c.HotBiddersRatio < 1:
		return fmt.Errorf("nexmark: hot ratios %d, %d, %d must be ≥ 1", c.HotAuctionRatio, c.HotSellersRatio, c.HotBiddersRatio)
	}
	return nil
}
