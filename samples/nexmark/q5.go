package nexmark

import (
	"slices"
	"time"

	"github.com/weirstream/weir"
)

// Window sizes of the windowed queries (the Beam configuration's
// defaults: windows of 10 s, sliding every 5 s).
const (
	WindowSize   = 10 * time.Second
	WindowPeriod = 5 * time.Second
)

// HotItems is Q5's output: in one window, the auctions with the most bids.
type HotItems struct {
	Start    int64   `msgpack:"start" json:"start"` // Unix ms
	End      int64   `msgpack:"end" json:"end"`
	Auctions []int64 `msgpack:"auctions" json:"auctions"` // ascending
	Bids     int64   `msgpack:"bids" json:"bids"`
}

// Q5 is hot items: the bids of each auction counted in sliding windows of
// WindowSize every WindowPeriod; per window, the auctions with the most
// bids. A second keyed operator takes each window's counts and picks the
// top when the watermark passes the window's end.
func Q5(events weir.Stream[Event]) weir.Stream[HotItems] {
	byAuction := weir.KeyBy(Bids(events), func(b Bid) int64 { return b.Auction })
	counts := weir.Aggregate(weir.Window(byAuction, weir.Sliding(WindowSize, WindowPeriod)), "q5-counts", weir.Count[Bid]())
	top := weir.NewValueState[HotItems](events.Graph(), "top")
	byWindow := weir.KeyBy(counts, func(r weir.WindowResult[int64, int64]) int64 { return r.End.UnixMilli() })
	return weir.ProcessWithTimers(byWindow, "q5", weir.KeyedFunctions[weir.WindowResult[int64, int64], int64, HotItems]{
		OnRecord: func(ctx *weir.KeyedContext[int64], r weir.WindowResult[int64, int64], _ *weir.Emitter[HotItems]) error {
			h, ok := top.Value(ctx)
			switch {
			case !ok || r.Value > h.Bids:
				h = HotItems{Start: r.Start.UnixMilli(), End: r.End.UnixMilli(), Auctions: []int64{r.Key}, Bids: r.Value}
				ctx.Timers().RegisterEventTime(ctx.Timestamp())
			case r.Value == h.Bids:
				h.Auctions = append(h.Auctions, r.Key)
			default:
				return nil
			}
			top.Set(ctx, h)
			return nil
		},
		OnTimer: func(ctx *weir.KeyedContext[int64], _ weir.Timer, out *weir.Emitter[HotItems]) error {
			h, ok := top.Value(ctx)
			if ok {
				top.Clear(ctx)
				slices.Sort(h.Auctions)
				out.Emit(h)
			}
			return nil
		},
	}, weir.WithState(top))
}
