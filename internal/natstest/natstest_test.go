package natstest

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
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
