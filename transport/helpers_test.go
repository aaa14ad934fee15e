package transport

import (
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/weirstream/weir/internal/poll"
)

// startServer runs an embedded nats-server for the test and, at cleanup,
// shuts it down and checks that no NATS or transport goroutine is left.
func startServer(t *testing.T) *server.Server {
	t.Helper()
	t.Cleanup(func() { checkNoGoroutines(t) }) // runs last
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatalf("new server: %v", err)
	}
	s.Start()
	t.Cleanup(func() {
		s.Shutdown()
		s.WaitForShutdown()
	})
	if !s.ReadyForConnections(5 * time.Second) {
		t.Fatal("nats-server not ready within 5s")
	}
	return s
}

// connect opens a client connection closed at cleanup.
func connect(t *testing.T, s *server.Server, opts ...nats.Option) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(s.ClientURL(), opts...)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// waitFor polls cond until it holds or 5 s pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	if !poll.Until(5*time.Second, poll.Every, cond) {
		t.Fatalf("timed out after 5s waiting for %s", what)
	}
}

// checkNoGoroutines waits up to 5 s for goroutines of nats.go, nats-server
// and this package (other than the test itself) to end.
func checkNoGoroutines(t *testing.T) {
	t.Helper()
	var left []string
	gone := func() bool {
		left = left[:0]
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		for _, g := range strings.Split(string(buf), "\n\n") {
			if strings.Contains(g, "checkNoGoroutines") {
				continue
			}
			if strings.Contains(g, "nats-io/nats.go") || strings.Contains(g, "nats-io/nats-server") ||
				strings.Contains(g, "weir/transport.") && !strings.Contains(g, "testing.tRunner") {
				left = append(left, g)
			}
		}
		return len(left) == 0
	}
	if !poll.Until(5*time.Second, poll.Every, gone) {
		t.Errorf("%d goroutines outlived the test:\n%s", len(left), strings.Join(left, "\n\n"))
	}
}
