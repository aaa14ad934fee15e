package nexmark

import (
	"context"
	"encoding/json"
	"reflect"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/weirstream/weir"
)

// testEvents is the small seeded input: at 1000 events per second of event
// time, 60 s of auctions, enough for several windows of each kind.
const (
	testEvents = 60_000
	testSeed   = 7
)

func testGenerator(t *testing.T) *Generator {
	t.Helper()
	cfg := DefaultConfig(testSeed)
	cfg.Rate = 1000
	gen, err := NewGenerator(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return gen
}

// collector gathers a sink's records from every instance.
type collector[T any] struct {
	mu   sync.Mutex
	recs []T
}

func (c *collector[T]) Open(weir.TaskInfo) error { return nil }
func (c *collector[T]) Finish() error            { return nil }
func (c *collector[T]) Close() error             { return nil }
func (c *collector[T]) Write(b []T) error {
	c.mu.Lock()
	c.recs = append(c.recs, b...)
	c.mu.Unlock()
	return nil
}

// runQuery runs query over the test events at parallelism 2 (every keyed
// edge shuffles) and returns its output.
func runQuery[T any](t *testing.T, query func(weir.Stream[Event]) weir.Stream[T]) []T {
	t.Helper()
	return runQueryOn(t, query, testGenerator(t).Event, testEvents)
}

// runQueryOn runs query over events 0 … n-1 of event at parallelism 2.
func runQueryOn[T any](t *testing.T, query func(weir.Stream[Event]) weir.Stream[T], event func(int64) Event, n int64) []T {
	t.Helper()
	g := weir.NewGraph("nexmark-test", weir.WithParallelism(2))
	src := weir.WithTimestamps(weir.Generate(g, "events", n, event), "timestamps", eventTime, weir.BoundedOutOfOrderness(0))
	var c collector[T]
	weir.ToSink(query(src), "collect", func(int) weir.Sink[T] { return &c })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := weir.Run(ctx, g); err != nil {
		t.Fatal(err)
	}
	return c.recs
}

// sameSet compares two multisets of records by their printed form.
func sameSet[T any](t *testing.T, what string, got, want []T) {
	t.Helper()
	key := func(rs []T) []string {
		out := make([]string, len(rs))
		for i, r := range rs {
			b, err := json.Marshal(r) // follows pointers, unlike %v
			if err != nil {
				t.Fatal(err)
			}
			out[i] = string(b)
		}
		sort.Strings(out)
		return out
	}
	g, w := key(got), key(want)
	if len(w) == 0 {
		t.Fatalf("%s: the reference has no results: the test input is too small", what)
	}
	if len(g) != len(w) {
		t.Fatalf("%s: %d results, want %d", what, len(g), len(w))
	}
	for i := range g {
		if g[i] != w[i] {
			t.Fatalf("%s: result %d of the sorted output is %s, want %s", what, i, clip(g[i]), clip(w[i]))
		}
	}
}

// clip shortens a long record for a failure message.
func clip(s string) string {
	if len(s) > 400 {
		return s[:400] + "…"
	}
	return s
}

func TestGeneratorProportionsAndDeterminism(t *testing.T) {
	gen := testGenerator(t)
	again := testGenerator(t)
	kinds := map[Kind]int{}
	var lastPersonID, lastAuctionID int64
	for i := range int64(5000) {
		e := gen.Event(i)
		if !reflect.DeepEqual(e, again.Event(i)) {
			t.Fatalf("event %d differs between two generators of one seed", i)
		}
		if e.Time() != gen.TimeOf(i) {
			t.Fatalf("event %d at %d ms, want %d", i, e.Time(), gen.TimeOf(i))
		}
		kinds[e.Kind]++
		switch e.Kind {
		case KindPerson:
			if e.Person.ID != lastPersonID+1 && lastPersonID != 0 {
				t.Fatalf("person ids jump from %d to %d", lastPersonID, e.Person.ID)
			}
			lastPersonID = e.Person.ID
		case KindAuction:
			a := e.Auction
			if a.Reserve < a.InitialBid || a.Expires <= a.DateTime || a.Category < 10 || a.Category >= 15 || a.Seller < FirstPersonID || a.Seller > lastPersonID+personIDLead {
				t.Fatalf("auction %+v breaks the rules", a)
			}
			lastAuctionID = a.ID
		case KindBid:
			b := e.Bid
			if b.Auction < FirstAuctionID || b.Auction > lastAuctionID+auctionIDLead || b.Price < 100 || b.Price > 100_000_000 {
				t.Fatalf("bid %+v breaks the rules (newest auction %d)", b, lastAuctionID)
			}
		}
	}
	if kinds[KindPerson] != 100 || kinds[KindAuction] != 300 || kinds[KindBid] != 4600 {
		t.Fatalf("kinds %v, want 1:3:46 of 5000", kinds)
	}
	other := DefaultConfig(testSeed + 1)
	other.Rate = 1000
	g2, _ := NewGenerator(other)
	if reflect.DeepEqual(g2.Event(60), gen.Event(60)) {
		t.Fatal("another seed gives the same bid")
	}
}

func TestQ0PassesEveryEvent(t *testing.T) {
	sameSet(t, "q0", runQuery(t, Q0), refEvents(testGenerator(t), testEvents))
}

func TestQ1ConvertsEveryBid(t *testing.T) {
	sameSet(t, "q1", runQuery(t, Q1), refQ1(refEvents(testGenerator(t), testEvents)))
}

func TestQ2SelectsAuctions(t *testing.T) {
	sameSet(t, "q2", runQuery(t, Q2), refQ2(refEvents(testGenerator(t), testEvents)))
}

func TestQ3JoinsSellersAndAuctions(t *testing.T) {
	sameSet(t, "q3", runQuery(t, Q3), refQ3(refEvents(testGenerator(t), testEvents)))
}

func TestQ4AveragesWinningPricePerCategory(t *testing.T) {
	got := runQuery(t, Q4)
	want, winners := refQ4(refEvents(testGenerator(t), testEvents))
	if len(got) != winners {
		t.Fatalf("q4: %d updates, want one per winning bid: %d", len(got), winners)
	}
	final := map[int64]CategoryPrice{}
	for _, c := range got {
		if c.Auctions > final[c.Category].Auctions {
			final[c.Category] = c
		}
	}
	if !reflect.DeepEqual(final, want) {
		t.Fatalf("q4: final averages %+v, want %+v", final, want)
	}
}

func TestQ5HotItems(t *testing.T) {
	sameSet(t, "q5", runQuery(t, Q5), refQ5(refEvents(testGenerator(t), testEvents), WindowSize.Milliseconds(), WindowPeriod.Milliseconds()))
}

func TestQ7HighestBid(t *testing.T) {
	sameSet(t, "q7", runQuery(t, Q7), refQ7(refEvents(testGenerator(t), testEvents), WindowSize.Milliseconds()))
}

func TestQ8NewSellers(t *testing.T) {
	sameSet(t, "q8", runQuery(t, Q8), refQ8(refEvents(testGenerator(t), testEvents), WindowSize.Milliseconds()))
}

func TestQ11BidderSessions(t *testing.T) {
	var got []refSession
	for _, s := range runQuery(t, Q11) {
		got = append(got, refSession{Bidder: s.Key, Start: s.Start.UnixMilli(), End: s.End.UnixMilli(), Bids: s.Value})
	}
	sameSet(t, "q11", got, refQ11(refEvents(testGenerator(t), testEvents), SessionGap.Milliseconds()))
}

// tiedBid is bid i of a stream made of ties: four auctions bid on in turn,
// prices 0, 100 and 200 in turn, 100 bids per second of event time.
func tiedBid(i int64) Event {
	return Event{Kind: KindBid, Bid: Bid{Auction: FirstAuctionID + i%4, Bidder: FirstPersonID + i%7, Price: 100 * (i % 3),
		DateTime: DefaultConfig(0).Base.UnixMilli() + i*10}}
}

// TestQ5AndQ7KeepTies: every auction with the top count and every bid with
// the top price is reported (the seeded input has no ties).
func TestQ5AndQ7KeepTies(t *testing.T) {
	const n = 12_000
	events := make([]Event, n)
	for i := range int64(n) {
		events[i] = tiedBid(i)
	}
	hot := refQ5(events, WindowSize.Milliseconds(), WindowPeriod.Milliseconds())
	if len(hot[len(hot)/2].Auctions) != 4 {
		t.Fatalf("the input has no tie: %+v", hot[len(hot)/2])
	}
	sameSet(t, "q5", runQueryOn(t, Q5, tiedBid, n), hot)
	sameSet(t, "q7", runQueryOn(t, Q7, tiedBid, n), refQ7(events, WindowSize.Milliseconds()))
}
