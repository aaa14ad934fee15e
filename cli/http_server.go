package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/weirstream/weir/metrics"
	"github.com/weirstream/weir/web"
)

// httpShutdownWait bounds how long a stopping node waits for requests in
// progress on its HTTP listener.
const httpShutdownWait = 2 * time.Second

// listenHTTP binds --http HOST:PORT (port 0 picks a free port) before the
// node does anything else, so a bad or busy address is a clear error at once.
func listenHTTP(addr string) (net.Listener, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("--http %q must be HOST:PORT (e.g. 127.0.0.1:8080, or port 0 for a free one): %w", addr, err)
	}
	if port == "" {
		return nil, fmt.Errorf("--http %q has no port (e.g. %s:8080)", addr, host)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--http %q: cannot listen (bad host, or the port is in use): %w", addr, err)
	}
	return ln, nil
}

// httpServer serves a node's /metrics, and what mountExtra adds, on the
// listener of --http.
type httpServer struct {
	srv  *http.Server
	ln   net.Listener
	done chan struct{}
	once sync.Once
}

// serveHTTP serves src on ln until Close; it logs the address.
func serveHTTP(ln net.Listener, src httpSource, log zerolog.Logger) *httpServer {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", src.Metrics.Handler())
	mountExtra(mux, src)
	s := &httpServer{srv: &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}, ln: ln, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error().Err(err).Str("addr", ln.Addr().String()).Msg("HTTP listener stopped")
		}
	}()
	log.Info().Str("addr", ln.Addr().String()).Str("metrics_url", "http://"+ln.Addr().String()+"/metrics").Msg("serving HTTP")
	return s
}

// Close stops the listener, waits a little for requests in progress and for
// the serving goroutine; it is safe to call more than once.
func (s *httpServer) Close() {
	if s == nil {
		return
	}
	s.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), httpShutdownWait)
		defer cancel()
		if err := s.srv.Shutdown(ctx); err != nil {
			_ = s.srv.Close()
		}
		<-s.done
	})
}

// httpSource is what a node's HTTP listener can show.
type httpSource struct {
	// Metrics is the node's registry, served at /metrics.
	Metrics *metrics.Registry
	// Agent is the cluster node under `node start`; nil under `node run`.
	Agent agentView
	// Job is the job `node run` runs; empty under `node start`.
	Job string
	// Web is what the page at / and its JSON API show (nil: no page).
	Web web.Source
}
