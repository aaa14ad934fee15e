// Package testnats starts an embedded nats-server with JetStream for tests
// and benchmarks.
package testnats

import (
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// JetStream runs an embedded nats-server (random port, file-backed JetStream
// under a temporary directory) for the life of tb and returns a JetStream
// context connected to it. Server and connection stop at tb's cleanup.
func JetStream(tb testing.TB) jetstream.JetStream {
	tb.Helper()
	srv, err := server.NewServer(&server.Options{
		Host: "127.0.0.1", Port: -1, JetStream: true,
		StoreDir: tb.TempDir(), NoLog: true, NoSigs: true,
	})
	if err != nil {
		tb.Fatalf("new nats server: %v", err)
	}
	srv.Start()
	tb.Cleanup(srv.Shutdown)
	if !srv.ReadyForConnections(10 * time.Second) {
		tb.Fatal("nats server not ready within 10s")
	}
	nc, err := nats.Connect(srv.ClientURL())
	if err != nil {
		tb.Fatalf("connect: %v", err)
	}
	tb.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		tb.Fatalf("jetstream: %v", err)
	}
	return js
}
