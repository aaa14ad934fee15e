package jetstream

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// URLEnv is the environment variable read for the server URL when none is
// given, as the NATS command-line tool does.
const URLEnv = "NATS_URL"

// apiTimeout bounds each JetStream API call (stream and consumer lookups,
// deletes, waiting for publish acknowledgements).
const apiTimeout = 10 * time.Second

// ResolveURL is the NATS server URL to use: url when not empty, else
// $NATS_URL, else the NATS default (nats://127.0.0.1:4222).
func ResolveURL(url string) string {
	if url != "" {
		return url
	}
	if env := os.Getenv(URLEnv); env != "" {
		return env
	}
	return nats.DefaultURL
}

// Conn says how a source or sink instance reaches NATS: an existing
// connection (not closed by weir), or a URL each instance connects to.
type Conn struct {
	// NC is a connection to use; when nil, each instance connects to URL.
	NC *nats.Conn
	// URL is the server URL (see ResolveURL for the default).
	URL string
}

// open returns a JetStream context and the connection the instance owns (nil
// when it uses c.NC).
func (c Conn) open(name string) (jetstream.JetStream, *nats.Conn, error) {
	nc, own := c.NC, false
	if nc == nil {
		var err error
		url := ResolveURL(c.URL)
		nc, err = nats.Connect(url, nats.Name(name))
		if err != nil {
			return nil, nil, fmt.Errorf("connect to NATS at %s: %w", url, err)
		}
		own = true
	}
	js, err := jetstream.New(nc)
	if err != nil {
		if own {
			nc.Close()
		}
		return nil, nil, fmt.Errorf("jetstream: %w", err)
	}
	if !own {
		nc = nil
	}
	return js, nc, nil
}

// apiContext is a context for one JetStream API call.
func apiContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), apiTimeout)
}
