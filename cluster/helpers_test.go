package cluster

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rs/zerolog"

	"github.com/weirstream/weir/internal/leaktest"
	"github.com/weirstream/weir/internal/poll"
)

// testLog writes through t.Log so output shows only for failing tests.
func testLog(t *testing.T) zerolog.Logger {
	return zerolog.New(zerolog.NewTestWriter(t)).Level(zerolog.InfoLevel)
}

// startServer starts an embedded server and shuts it down with the test,
// after which no goroutine started since may be left (leaktest.Check).
func startServer(t *testing.T, o EmbedOptions) *Embedded {
	t.Helper()
	leaktest.Check(t)
	if o.HostPort == "" && o.ConfigFile == "" {
		o.HostPort = "127.0.0.1:-1"
	}
	if o.StoreDir == "" {
		o.StoreDir = t.TempDir()
	}
	e, err := StartEmbedded(o, testLog(t))
	if err != nil {
		t.Fatalf("StartEmbedded: %v", err)
	}
	t.Cleanup(e.Shutdown)
	return e
}

// connect connects with o and closes the connection with the test.
func connect(t *testing.T, o ConnOptions) *nats.Conn {
	t.Helper()
	nc, err := o.Connect(testLog(t))
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// newJS returns a JetStream context on a new connection to e.
func newJS(t *testing.T, e *Embedded) jetstream.JetStream {
	t.Helper()
	js, err := jetstream.New(connect(t, ConnOptions{URL: e.ClientURL()}))
	if err != nil {
		t.Fatalf("jetstream.New: %v", err)
	}
	return js
}

// testCtx is a context bounded by a deadline and cancelled with the test.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	if !poll.Until(within, poll.Every, cond) {
		t.Fatalf("not within %s: %s", within, what)
	}
}
