// Package natstest runs an embedded nats-server for one test: on a free
// loopback port, with JetStream when asked (its store in the test's temporary
// directory), shut down at the test's cleanup, after which no goroutine the
// test started may be left (internal/leaktest).
package natstest

import (
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/weirstream/weir/internal/leaktest"
)

// ReadyWithin bounds how long Start waits for the server to accept clients.
const ReadyWithin = 10 * time.Second

// Options selects what the server offers.
type Options struct {
	// JetStream enables JetStream, stored in a directory of the test's.
	JetStream bool
	// MaxPayload, if not 0, is the most bytes a message may carry
	// (headers and data; the server's default is 1 MB).
	MaxPayload int32
}

// Server is an embedded nats-server owned by one test.
type Server struct {
	*server.Server
	// URL is the address clients connect to.
	URL string
}

// Start runs a server for t with the goroutine-leak check of
// leaktest.Check: at cleanup the server is shut down (and waited for),
// then every goroutine started since Start must end. Call it before
// starting anything else the test must stop (actor systems, clients), so
// that their cleanups run before the check.
func Start(t testing.TB, o Options) *Server {
	t.Helper()
	return start(t, o, leaktest.Within)
}

// start is Start with the leak check waiting at most leakWithin.
func start(t testing.TB, o Options, leakWithin time.Duration) *Server {
	t.Helper()
	leaktest.CheckWithin(t, leakWithin)
	opts := &server.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true}
	if o.JetStream {
		opts.JetStream, opts.StoreDir = true, t.TempDir()
	}
	opts.MaxPayload = o.MaxPayload
	s, err := server.NewServer(opts)
	if err != nil {
		t.Fatalf("embedded nats-server: %v", err)
	}
	s.Start()
	t.Cleanup(func() {
		s.Shutdown()
		s.WaitForShutdown()
	})
	if !s.ReadyForConnections(ReadyWithin) {
		t.Fatalf("embedded nats-server not ready for connections within %v", ReadyWithin)
	}
	return &Server{Server: s, URL: s.ClientURL()}
}

// Connect opens a client connection closed at t's cleanup.
func (s *Server) Connect(t testing.TB, opts ...nats.Option) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(s.URL, opts...)
	if err != nil {
		t.Fatalf("connect to %s: %v", s.URL, err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// JetStream returns a JetStream context on a new connection closed at t's
// cleanup; the server must have been started with JetStream.
func (s *Server) JetStream(t testing.TB) jetstream.JetStream {
	t.Helper()
	js, err := jetstream.New(s.Connect(t))
	if err != nil {
		t.Fatalf("jetstream on %s: %v", s.URL, err)
	}
	return js
}
