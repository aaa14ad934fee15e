package jetstream_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/internal/natstest"
	wjs "github.com/weirstream/weir/jetstream"
)

// event is an input message; count is an output message.
type event struct {
	Key string `json:"key"`
	Seq int64  `json:"seq"`
}

type count struct {
	Key   string `json:"key"`
	Count int64  `json:"count"`
}

// subjects is the input's subject filters, one split each.
var subjects = []string{"in.0", "in.1", "in.2", "in.3"}

func apiCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// startFilled starts an embedded server with the streams IN and OUT, fills
// IN with events 0 … n-1 and returns a JetStream context and a connection.
func startFilled(t *testing.T, n int64, keys int) (jetstream.JetStream, *nats.Conn) {
	t.Helper()
	srv := natstest.Start(t, natstest.Options{JetStream: true})
	js := srv.JetStream(t)
	makeStreams(t, js)
	fill(t, js, 0, n, keys)
	return js, srv.Connect(t)
}

// makeStreams creates the IN (in.>) and OUT (out.>) streams.
func makeStreams(t *testing.T, js jetstream.JetStream) {
	t.Helper()
	for name, subj := range map[string]string{"IN": "in.>", "OUT": "out.>"} {
		if _, err := js.CreateStream(apiCtx(t), jetstream.StreamConfig{Name: name, Subjects: []string{subj}}); err != nil {
			t.Fatalf("create stream %s: %v", name, err)
		}
	}
}

// fill publishes events from..to-1: event i has key k<i mod keys> on
// subject in.<i mod 4>.
func fill(t *testing.T, js jetstream.JetStream, from, to int64, keys int) {
	t.Helper()
	var futures []jetstream.PubAckFuture
	for i := from; i < to; i++ {
		b, _ := json.Marshal(event{Key: fmt.Sprintf("k%03d", i%int64(keys)), Seq: i})
		f, err := js.PublishAsync(subjects[i%int64(len(subjects))], b)
		if err != nil {
			t.Fatal(err)
		}
		futures = append(futures, f)
		if len(futures) == 1000 || i == to-1 {
			waitAcks(t, futures)
			futures = futures[:0]
		}
	}
}

// waitAcks waits for every publish to be acknowledged.
func waitAcks(t *testing.T, futures []jetstream.PubAckFuture) {
	t.Helper()
	for _, f := range futures {
		select {
		case <-f.Ok():
		case err := <-f.Err():
			t.Fatal(err)
		case <-time.After(30 * time.Second):
			t.Fatal("input not acknowledged within 30s")
		}
	}
}

// countGraph is IN → keyed running count → OUT.
func countGraph(nc *nats.Conn, srcP, countP, sinkP int, bounded bool) *weir.Graph {
	return slowCountGraph(nc, srcP, countP, sinkP, bounded, 0)
}

// slowCountGraph is countGraph with the count sleeping about perRecord on
// each record, so a run takes several checkpoints.
func slowCountGraph(nc *nats.Conn, srcP, countP, sinkP int, bounded bool, perRecord time.Duration) *weir.Graph {
	sleepers := weir.NewSleepers(perRecord)
	g := weir.NewGraph("jscount")
	events := wjs.FromStream(g, "source", wjs.SourceConfig[event]{Conn: wjs.Conn{NC: nc}, Stream: "IN", Subjects: subjects, Bounded: bounded},
		weir.Parallelism(srcP))
	n := weir.NewValueState[int64](g, "n")
	counts := weir.Process(weir.KeyBy(events, func(e event) string { return e.Key }), "count",
		func(ctx *weir.KeyedContext[string], e event, out *weir.Emitter[count]) error {
			sleepers[ctx.Instance()].Tick()
			c := n.Get(ctx) + 1
			n.Set(ctx, c)
			out.Emit(count{Key: e.Key, Count: c})
			return nil
		}, weir.WithState(n), weir.Parallelism(countP))
	wjs.ToStream(counts, "sink", wjs.SinkConfig[count]{Conn: wjs.Conn{NC: nc}, Stream: "OUT", Subject: "out.counts"},
		weir.Parallelism(sinkP))
	return g
}

// readAll returns every message of stream with its headers.
func readAll(t *testing.T, js jetstream.JetStream, stream string) []jetstream.Msg {
	t.Helper()
	s, err := js.Stream(apiCtx(t), stream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(apiCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs == 0 {
		return nil
	}
	cons, err := s.OrderedConsumer(apiCtx(t), jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	var out []jetstream.Msg
	for uint64(len(out)) < info.State.Msgs {
		mb, err := cons.Fetch(1000, jetstream.FetchMaxWait(time.Second))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for m := range mb.Messages() {
			out = append(out, m)
			n++
		}
		if n == 0 {
			t.Fatalf("read %d of %d messages of %s, then none", len(out), info.State.Msgs, stream)
		}
	}
	return out
}

// checkCounts demands that OUT holds, for each of keys keys, the counts
// 1..total/keys exactly once each: every input counted once, every output
// published once.
func checkCounts(t *testing.T, js jetstream.JetStream, total int64, keys int) {
	t.Helper()
	msgs := readAll(t, js, "OUT")
	seen := map[count]int{}
	for _, m := range msgs {
		var c count
		if err := json.Unmarshal(m.Data(), &c); err != nil {
			t.Fatalf("output %q: %v", m.Data(), err)
		}
		seen[c]++
	}
	bad := 0
	for k := 0; k < keys; k++ {
		for c := int64(1); c <= total/int64(keys); c++ {
			if n := seen[count{fmt.Sprintf("k%03d", k), c}]; n != 1 && bad < 10 {
				t.Errorf("key k%03d count %d published %d times, want once", k, c, n)
				bad++
			}
		}
	}
	if int64(len(msgs)) != total {
		t.Errorf("OUT holds %d messages, want %d (one per input)", len(msgs), total)
	}
}

// publishedAfter reads OUT and returns how many of its messages belong to
// batches of checkpoints after a given one.
func publishedAfter(t *testing.T, js jetstream.JetStream) func(id uint64) int {
	t.Helper()
	var ckpts []uint64
	for _, m := range readAll(t, js, "OUT") {
		var c uint64
		if _, err := fmt.Sscanf(m.Headers().Get(wjs.HeaderBatch), "%d-", &c); err != nil {
			t.Fatalf("message without a batch header: %v", m.Headers())
		}
		ckpts = append(ckpts, c)
	}
	return func(id uint64) int {
		n := 0
		for _, c := range ckpts {
			if c > id {
				n++
			}
		}
		return n
	}
}
