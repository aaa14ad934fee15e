package cluster

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"
)

// ReconnectWait is the longest Connect waits between reconnect attempts.
const ReconnectWait = 500 * time.Millisecond

// firstReconnectWait is how long Connect waits before its first reconnect
// attempt; each further wait doubles, up to ReconnectWait. A dropped
// connection (a proxy or a load balancer closing it) comes back within tens
// of milliseconds, inside the other nodes' --disconnect-grace, where
// nats.go's default would wait a full ReconnectWait first.
const firstReconnectWait = 10 * time.Millisecond

// reconnectWait is the wait before reconnect attempt n (from 1), without
// jitter.
func reconnectWait(n int) time.Duration {
	if n < 1 {
		n = 1
	}
	if n > 16 {
		return ReconnectWait
	}
	return min(ReconnectWait, firstReconnectWait<<(n-1))
}

// ConnOptions says how a node connects to NATS. The zero value connects to
// nats.DefaultURL without authentication.
type ConnOptions struct {
	URL      string // server URL(s), comma-separated; nats.DefaultURL when empty
	Creds    string // --nats-creds FILE: JWT + nkey credentials (nats.UserCredentials)
	User     string // --nats-user
	Password string // --nats-password
	Token    string // --nats-token
	CA       string // --nats-ca FILE: CA bundle that signs the server certificate (nats.RootCAs)
	Cert     string // --nats-cert FILE: client certificate (nats.ClientCert)
	Key      string // --nats-key FILE: private key of the client certificate
	Name     string // connection name shown by the server's monitoring
}

// url returns the URL to dial.
func (o ConnOptions) url() string {
	if strings.TrimSpace(o.URL) == "" {
		return nats.DefaultURL
	}
	return o.URL
}

// Validate checks the options before any connection is made and names the
// offending flag: a certificate without its key, a user without a password,
// conflicting authentication methods, files that cannot be read, bad URLs.
func (o ConnOptions) Validate() error {
	var errs []error
	if o.Cert != "" && o.Key == "" {
		errs = append(errs, errors.New("--nats-cert needs --nats-key (the certificate's private key)"))
	}
	if o.Key != "" && o.Cert == "" {
		errs = append(errs, errors.New("--nats-key needs --nats-cert (the client certificate)"))
	}
	if o.User != "" && o.Password == "" {
		errs = append(errs, errors.New("--nats-user needs --nats-password"))
	}
	if o.Password != "" && o.User == "" {
		errs = append(errs, errors.New("--nats-password needs --nats-user"))
	}
	if o.Token != "" && o.User != "" {
		errs = append(errs, errors.New("--nats-token and --nats-user are alternatives: give one"))
	}
	if o.Creds != "" && (o.User != "" || o.Token != "") {
		errs = append(errs, errors.New("--nats-creds cannot be combined with --nats-user or --nats-token"))
	}
	for _, f := range []struct{ flag, path string }{
		{"--nats-creds", o.Creds}, {"--nats-ca", o.CA}, {"--nats-cert", o.Cert}, {"--nats-key", o.Key},
	} {
		if f.path == "" {
			continue
		}
		if err := readableFile(f.path); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", f.flag, err))
		}
	}
	if err := checkURLs(o.url()); err != nil {
		errs = append(errs, fmt.Errorf("--nats: %w", err))
	}
	return errors.Join(errs...)
}

// readableFile reports why path is not a readable regular file.
func readableFile(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	return f.Close()
}

// checkURLs checks a comma-separated list of NATS server URLs.
func checkURLs(list string) error {
	for _, s := range strings.Split(list, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			return fmt.Errorf("empty server URL in %q", redactURLs(list))
		}
		if !strings.Contains(s, "://") {
			continue // host:port, as nats.go accepts
		}
		u, err := url.Parse(s)
		if err != nil {
			return fmt.Errorf("bad server URL %q", redactURL(s))
		}
		switch u.Scheme {
		case "nats", "tls", "ws", "wss":
		default:
			return fmt.Errorf("server URL %q: scheme must be nats, tls, ws or wss", redactURL(s))
		}
		if u.Host == "" {
			return fmt.Errorf("server URL %q has no host", redactURL(s))
		}
	}
	return nil
}

// redactURL hides any user, password or token carried in a URL.
func redactURL(s string) string {
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok {
		rest, scheme = s, ""
	}
	if at := strings.LastIndex(rest, "@"); at >= 0 {
		rest = "***@" + rest[at+1:]
	}
	if scheme == "" {
		return rest
	}
	return scheme + "://" + rest
}

// redactURLs applies redactURL to each URL of a comma-separated list.
func redactURLs(list string) string {
	parts := strings.Split(list, ",")
	for i, p := range parts {
		parts[i] = redactURL(strings.TrimSpace(p))
	}
	return strings.Join(parts, ",")
}

// Connect validates the options and connects. It reconnects forever
// (MaxReconnects(-1)), at once (firstReconnectWait) and then backing off
// to every ReconnectWait, logs disconnects, reconnects and
// asynchronous errors, and wraps errors with the server URL (credentials
// removed). Options in extra are applied last and may override these.
func (o ConnOptions) Connect(log zerolog.Logger, extra ...nats.Option) (*nats.Conn, error) {
	target := redactURLs(o.url())
	if err := o.Validate(); err != nil {
		return nil, fmt.Errorf("connect to NATS at %s: %w", target, err)
	}
	log = log.With().Str("component", "nats").Logger()
	opts := []nats.Option{
		nats.MaxReconnects(-1),
		nats.ReconnectWait(ReconnectWait),
		// Up to a fifth more at random, so that nodes cut off together do
		// not reconnect in step.
		nats.CustomReconnectDelay(func(n int) time.Duration {
			d := reconnectWait(n)
			return d + rand.N(d/5+1)
		}),
		nats.DisconnectErrHandler(func(nc *nats.Conn, err error) {
			ev := log.Warn().Str("url", target)
			if err != nil {
				ev = ev.Err(err)
			}
			ev.Msg("disconnected from NATS")
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) {
			log.Info().Str("url", redactURL(nc.ConnectedUrlRedacted())).Msg("reconnected to NATS")
		}),
		nats.ClosedHandler(func(nc *nats.Conn) {
			ev := log.Debug().Str("url", target)
			if err := nc.LastError(); err != nil {
				ev = log.Warn().Str("url", target).Err(err)
			}
			ev.Msg("NATS connection closed")
		}),
		nats.ErrorHandler(func(nc *nats.Conn, sub *nats.Subscription, err error) {
			ev := log.Warn().Err(err)
			if sub != nil {
				ev = ev.Str("subject", sub.Subject)
			}
			ev.Msg("NATS asynchronous error")
		}),
	}
	if o.Name != "" {
		opts = append(opts, nats.Name(o.Name))
	}
	if o.Creds != "" {
		opts = append(opts, nats.UserCredentials(o.Creds))
	}
	if o.User != "" {
		opts = append(opts, nats.UserInfo(o.User, o.Password))
	}
	if o.Token != "" {
		opts = append(opts, nats.Token(o.Token))
	}
	if o.CA != "" {
		opts = append(opts, nats.RootCAs(o.CA))
	}
	if o.Cert != "" {
		opts = append(opts, nats.ClientCert(o.Cert, o.Key))
	}
	opts = append(opts, extra...)
	nc, err := nats.Connect(o.url(), opts...)
	if err != nil {
		return nil, fmt.Errorf("connect to NATS at %s: %w", target, err)
	}
	log.Info().Str("url", redactURL(nc.ConnectedUrlRedacted())).Msg("connected to NATS")
	return nc, nil
}
