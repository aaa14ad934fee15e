// Package jsbridge is the JetStream sample: it reads JSON events
// {"key":…,"seq":…} from a stream, keeps a running count per key and
// publishes {"key":…,"count":…} to another stream, exactly once with
// checkpoints. Fill (and the `node js-fill` command) writes its input.
package jsbridge

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/weirstream/weir"
	wjs "github.com/weirstream/weir/jetstream"
)

// Event is one input message.
type Event struct {
	Key string `json:"key"`
	Seq int64  `json:"seq"`
}

// Count is one output message: the key's running count after an event.
type Count struct {
	Key   string `json:"key"`
	Count int64  `json:"count"`
}

// Config names the streams and sizes the job.
type Config struct {
	// URL is the NATS server (empty: $NATS_URL, else the NATS default).
	URL string
	// In is the input stream; event i is on subject In.<i mod Splits>, and
	// the source reads one split per subject.
	In     string
	Splits int
	// Out is the output stream; counts go to subject Out.counts.
	Out string
	// Follow keeps reading new input forever; otherwise the job reads what
	// the input held when it started and ends.
	Follow      bool
	Parallelism int
}

// InSubjects is the input's subjects, one per split.
func (c Config) InSubjects() []string {
	subjects := make([]string, c.Splits)
	for i := range subjects {
		subjects[i] = fmt.Sprintf("%s.%d", c.In, i)
	}
	return subjects
}

// OutSubject is where the counts go.
func (c Config) OutSubject() string { return c.Out + ".counts" }

func (c Config) check() error {
	switch {
	case c.In == "" || c.Out == "":
		return fmt.Errorf("jsbridge: input and output streams must be named")
	case c.In == c.Out:
		return fmt.Errorf("jsbridge: input and output stream are both %q", c.In)
	case c.Splits < 1:
		return fmt.Errorf("jsbridge: splits %d must be ≥ 1", c.Splits)
	case c.Parallelism < 1:
		return fmt.Errorf("jsbridge: parallelism %d must be ≥ 1", c.Parallelism)
	}
	return nil
}

// Build makes the graph: source (parallelism) → count per key
// (parallelism) → sink (parallelism).
func Build(cfg Config) (*weir.Graph, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	conn := wjs.Conn{URL: cfg.URL}
	g := weir.NewGraph("jsbridge", weir.WithParallelism(cfg.Parallelism))
	events := wjs.FromStream(g, "source", wjs.SourceConfig[Event]{Conn: conn, Stream: cfg.In,
		Subjects: cfg.InSubjects(), Bounded: !cfg.Follow})
	n := weir.NewValueState[int64](g, "count")
	counts := weir.Process(weir.KeyBy(events, func(e Event) string { return e.Key }), "count",
		func(ctx *weir.KeyedContext[string], e Event, out *weir.Emitter[Count]) error {
			c := n.Get(ctx) + 1
			n.Set(ctx, c)
			out.Emit(Count{Key: e.Key, Count: c})
			return nil
		}, weir.WithState(n))
	wjs.ToStream(counts, "sink", wjs.SinkConfig[Count]{Conn: conn, Stream: cfg.Out, Subject: cfg.OutSubject()})
	return g, nil
}

// FillConfig says what Fill publishes: events From … From+Records-1, event
// i with key k<i mod Keys> (six digits) on In.<i mod Splits>.
type FillConfig struct {
	Config
	From, Records int64
	Keys          int
}

// fillTimeout bounds Fill's stream calls and its wait for acknowledgements.
const fillTimeout = 30 * time.Second

// ackWindow is how many publishes Fill has in flight at most.
const ackWindow = 1000

// Fill creates the input and output streams if missing (subjects In.> and
// Out.>) and publishes the events; it returns the input's last sequence.
func Fill(nc *nats.Conn, cfg FillConfig) (uint64, error) {
	if err := cfg.check(); err != nil {
		return 0, err
	}
	if cfg.Keys < 1 || cfg.Records < 0 || cfg.From < 0 {
		return 0, fmt.Errorf("js-fill: keys %d must be ≥ 1, records %d and from %d ≥ 0", cfg.Keys, cfg.Records, cfg.From)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return 0, fmt.Errorf("js-fill: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), fillTimeout)
	defer cancel()
	if err := createStreams(ctx, js, cfg.Config); err != nil {
		return 0, err
	}
	return publishEvents(js, cfg)
}

// createStreams creates the input and output streams if missing.
func createStreams(ctx context.Context, js jetstream.JetStream, cfg Config) error {
	for _, name := range []string{cfg.In, cfg.Out} {
		if _, err := js.CreateOrUpdateStream(ctx, jetstream.StreamConfig{Name: name, Subjects: []string{name + ".>"}}); err != nil {
			return fmt.Errorf("js-fill: stream %s: %w", name, err)
		}
	}
	return nil
}

// publishEvents publishes the events, at most ackWindow unacknowledged, and
// returns the highest sequence acknowledged.
func publishEvents(js jetstream.JetStream, cfg FillConfig) (uint64, error) {
	subjects := cfg.InSubjects()
	var futures []jetstream.PubAckFuture
	var last uint64
	for i := cfg.From; i < cfg.From+cfg.Records; i++ {
		data := fmt.Appendf(nil, `{"key":"k%06d","seq":%d}`, i%int64(cfg.Keys), i)
		f, err := js.PublishAsync(subjects[i%int64(len(subjects))], data)
		if err != nil {
			return 0, fmt.Errorf("js-fill: publish event %d: %w", i, err)
		}
		futures = append(futures, f)
		if len(futures) == ackWindow || i == cfg.From+cfg.Records-1 {
			timeout := time.After(fillTimeout)
			for _, f := range futures {
				select {
				case ack := <-f.Ok():
					last = max(last, ack.Sequence)
				case err := <-f.Err():
					return 0, fmt.Errorf("js-fill: publish to %s: %w", f.Msg().Subject, err)
				case <-timeout:
					return 0, fmt.Errorf("js-fill: no acknowledgement within %v", fillTimeout)
				}
			}
			futures = futures[:0]
		}
	}
	return last, nil
}
