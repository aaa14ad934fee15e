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
	g := weir.NewGraph("nexmark-test", weir.WithParallelism(2))
	var c collector[T]
	weir.ToSink(query(Source(g, testGenerator(t), testEvents)), "collect", func(int) weir.Sink[T] { return &c })
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
			t.Fatalf("%s: result %d of the sorted output is %s, want %s", what, i, g[i], w[i])
		}
	}
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
