package jetstream_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/weirstream/weir"
	wjs "github.com/weirstream/weir/jetstream"
)

// A job from one JetStream stream to another, exactly once with
// checkpoints. The example embeds a NATS server with JetStream; a weir
// cluster's own NATS serves the same, and `nats stream view words` shows
// the output.
func Example() {
	dir, err := os.MkdirTemp("", "weir-jetstream-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	ns, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, JetStream: true,
		StoreDir: filepath.Join(dir, "nats"), NoLog: true, NoSigs: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	ns.Start()
	defer ns.Shutdown()
	if !ns.ReadyForConnections(10 * time.Second) {
		fmt.Println("NATS did not start")
		return
	}
	nc, err := nats.Connect(ns.ClientURL())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer nc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	// The input stream holds three lines; the output stream stores words.*.
	js, err := jetstream.New(nc)
	if err != nil {
		fmt.Println(err)
		return
	}
	for name, subject := range map[string]string{"lines": "lines.>", "words": "words.>"} {
		if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: name, Subjects: []string{subject}}); err != nil {
			fmt.Println(err)
			return
		}
	}
	for _, line := range []string{"to be", "or not", "to be"} {
		if _, err := js.Publish(ctx, "lines.in", []byte(line)); err != nil {
			fmt.Println(err)
			return
		}
	}

	g := weir.NewGraph("split-lines")
	lines := wjs.FromStream(g, "lines", wjs.SourceConfig[[]byte]{Conn: wjs.Conn{NC: nc}, Stream: "lines", Bounded: true})
	words := weir.FlatMap(lines, "split", func(line []byte, out *weir.Emitter[string]) error {
		for _, w := range strings.Fields(string(line)) {
			out.Emit(w)
		}
		return nil
	})
	wjs.ToStream(words, "words", wjs.SinkConfig[string]{Conn: wjs.Conn{NC: nc}, Stream: "words",
		SubjectOf: func(w string) string { return "words." + w }})
	cp := weir.DefaultCheckpointConfig()
	cp.StateDir = filepath.Join(dir, "state")
	if _, err := weir.Run(ctx, g, weir.WithCheckpoints(cp)); err != nil {
		fmt.Println(err)
		return
	}

	// The output stream holds each word once; read it from its start.
	st, err := js.Stream(ctx, "words")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(st.CachedInfo().State.Msgs, "messages")
	cons, err := js.OrderedConsumer(ctx, "words", jetstream.OrderedConsumerConfig{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for range 6 {
		msg, err := cons.Next(jetstream.FetchMaxWait(10 * time.Second))
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(msg.Subject(), string(msg.Data()))
	}
	// Output:
	// 6 messages
	// words.to "to"
	// words.be "be"
	// words.or "or"
	// words.not "not"
	// words.to "to"
	// words.be "be"
}
