package natstest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/weirstream/weir/internal/leaktest"
)

func TestStartServesCoreNATS(t *testing.T) {
	s := Start(t, Options{})
	nc := s.Connect(t)
	sub, err := nc.SubscribeSync("greet")
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Publish("greet", []byte("hi")); err != nil {
		t.Fatal(err)
	}
	msg, err := sub.NextMsg(ReadyWithin)
	if err != nil || string(msg.Data) != "hi" {
		t.Fatalf("NextMsg = %v, %v; want hi", msg, err)
	}
	if s.JetStreamEnabled() {
		t.Fatal("JetStream enabled without being asked for")
	}
}

func TestStartWithJetStreamStoresInTheTestDir(t *testing.T) {
	s := Start(t, Options{JetStream: true})
	js := s.JetStream(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	kv, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "b"})
	if err != nil {
		t.Fatalf("create KV: %v", err)
	}
	if _, err := kv.Put(ctx, "k", []byte("v")); err != nil {
		t.Fatalf("put: %v", err)
	}
	e, err := kv.Get(ctx, "k")
	if err != nil || string(e.Value()) != "v" {
		t.Fatalf("get = %v, %v; want v", e, err)
	}
}

// TestStartReportsAConnectionLeftOpen: a client the test never closes keeps
// its goroutines after the server is gone; the cleanup reports them.
func TestStartReportsAConnectionLeftOpen(t *testing.T) {
	r := &leaktest.Recorder{TB: t}
	s := start(r, Options{}, 200*time.Millisecond)
	nc, err := nats.Connect(s.URL, nats.MaxReconnects(-1), nats.ReconnectWait(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	r.RunCleanups()
	if len(r.Errs) != 1 || !strings.Contains(r.Errs[0], "nats-io/nats.go") {
		t.Fatalf("errors %q, want one listing the open connection's goroutines", r.Errs)
	}
}
