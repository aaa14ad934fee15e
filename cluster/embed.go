package cluster

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/rs/zerolog"
)

// EmbedReadyTimeout bounds how long StartEmbedded waits for the server to
// accept clients.
const EmbedReadyTimeout = 10 * time.Second

// EmbedOptions configures an embedded NATS server with JetStream, as started
// by `node start --embed-nats HOST:PORT`.
type EmbedOptions struct {
	// HostPort is where clients connect, e.g. "127.0.0.1:4222"; port 0 or -1
	// picks a free port. Empty keeps the config file's listen address, or
	// 127.0.0.1 with a free port when there is no config file.
	HostPort string
	// StoreDir holds the JetStream store (under the node's workdir). Required
	// unless the config file sets jetstream.store_dir.
	StoreDir string
	// User and Password, or Token, require clients to authenticate.
	User, Password, Token string
	// ConfigFile is an optional nats-server configuration file for full
	// auth/TLS configuration; the fields above override it.
	ConfigFile string
	// TLSCert and TLSKey (PEM files) turn on TLS for clients. TLSCA, when set,
	// also requires clients to present a certificate signed by it (mutual TLS).
	TLSCert, TLSKey, TLSCA string
	// MonitorHostPort, when set, serves the server's HTTP monitoring
	// endpoints (/varz, /connz, /subsz ...) there, as nats-server's
	// --http_port does; port 0 picks a free port.
	MonitorHostPort string
}

// Embedded is a running embedded NATS server.
type Embedded struct {
	srv  *server.Server
	once sync.Once
}

// serverOptions turns o into nats-server options.
func (o EmbedOptions) serverOptions() (*server.Options, error) {
	opts := &server.Options{}
	if o.ConfigFile != "" {
		var err error
		if opts, err = server.ProcessConfigFile(o.ConfigFile); err != nil {
			return nil, fmt.Errorf("nats config file %s: %w", o.ConfigFile, err)
		}
	}
	switch {
	case o.HostPort != "":
		host, port, err := splitHostPort(o.HostPort)
		if err != nil {
			return nil, err
		}
		opts.Host, opts.Port = host, port
	case o.ConfigFile == "":
		opts.Host, opts.Port = "127.0.0.1", server.RANDOM_PORT
	}
	if o.StoreDir != "" {
		opts.StoreDir = o.StoreDir
	}
	if opts.StoreDir == "" {
		return nil, errors.New("embedded NATS needs a JetStream store directory (StoreDir)")
	}
	opts.JetStream = true
	if o.User != "" && o.Password == "" {
		return nil, errors.New("embedded NATS: user given without password")
	}
	if o.Password != "" && o.User == "" {
		return nil, errors.New("embedded NATS: password given without user")
	}
	if o.User != "" && o.Token != "" {
		return nil, errors.New("embedded NATS: user/password and token are alternatives: give one")
	}
	if o.User != "" {
		opts.Username, opts.Password, opts.Authorization = o.User, o.Password, ""
	}
	if o.Token != "" {
		opts.Authorization, opts.Username, opts.Password = o.Token, "", ""
	}
	if err := o.tls(opts); err != nil {
		return nil, err
	}
	if o.MonitorHostPort != "" {
		host, port, err := splitHostPort(o.MonitorHostPort)
		if err != nil {
			return nil, fmt.Errorf("monitor: %w", err)
		}
		opts.HTTPHost, opts.HTTPPort = host, port
	}
	opts.NoSigs = true
	opts.NoLog = true // our own logger is installed with SetLogger
	return opts, nil
}

// tls sets the server TLS options from the TLS fields.
func (o EmbedOptions) tls(opts *server.Options) error {
	if o.TLSCert == "" && o.TLSKey == "" && o.TLSCA == "" {
		return nil
	}
	if o.TLSCert == "" || o.TLSKey == "" {
		return errors.New("embedded NATS: TLS needs both a certificate and a key")
	}
	tc := &server.TLSConfigOpts{
		CertFile: o.TLSCert,
		KeyFile:  o.TLSKey,
		CaFile:   o.TLSCA,
		Verify:   o.TLSCA != "",
		Timeout:  2,
	}
	cfg, err := server.GenTLSConfig(tc)
	if err != nil {
		return fmt.Errorf("embedded NATS TLS: %w", err)
	}
	opts.TLSConfig = cfg
	opts.TLS = true
	opts.TLSVerify = tc.Verify
	opts.TLSCert, opts.TLSKey, opts.TLSCaCert = o.TLSCert, o.TLSKey, o.TLSCA
	opts.TLSTimeout = tc.Timeout
	return nil
}

// splitHostPort parses HOST:PORT; port 0 or -1 means a free port.
func splitHostPort(hp string) (string, int, error) {
	host, ps, err := net.SplitHostPort(hp)
	if err != nil {
		return "", 0, fmt.Errorf("embedded NATS address %q: %w", hp, err)
	}
	port, err := strconv.Atoi(ps)
	if err != nil || port < -1 || port > 65535 {
		return "", 0, fmt.Errorf("embedded NATS address %q: bad port %q", hp, ps)
	}
	if port == 0 {
		port = server.RANDOM_PORT
	}
	if host == "" {
		host = "0.0.0.0"
	}
	return host, port, nil
}

// StartEmbedded starts a NATS server with JetStream in this process and
// waits until it accepts clients. Its log goes to log at warning level and
// above; it installs no signal handlers.
func StartEmbedded(o EmbedOptions, log zerolog.Logger) (*Embedded, error) {
	opts, err := o.serverOptions()
	if err != nil {
		return nil, err
	}
	srv, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("embedded NATS: %w", err)
	}
	srv.SetLogger(serverLogger{log: log.With().Str("component", "nats-server").Logger()}, false, false)
	srv.Start()
	e := &Embedded{srv: srv}
	if !srv.ReadyForConnections(EmbedReadyTimeout) {
		e.Shutdown()
		return nil, fmt.Errorf("embedded NATS on %s:%d not ready within %s", opts.Host, opts.Port, EmbedReadyTimeout)
	}
	if !srv.JetStreamEnabled() {
		e.Shutdown()
		return nil, fmt.Errorf("embedded NATS on %s: JetStream did not start (store %s)", e.ClientURL(), opts.StoreDir)
	}
	ev := log.Info().Str("url", e.ClientURL()).Str("store", opts.StoreDir)
	if addr := srv.MonitorAddr(); addr != nil {
		ev = ev.Str("monitor", "http://"+addr.String())
	}
	ev.Msg("embedded NATS started")
	return e, nil
}

// ClientURL is the URL clients dial, with a wildcard listen address
// (0.0.0.0, ::) replaced by loopback. Its scheme is tls:// when TLS is on.
func (e *Embedded) ClientURL() string {
	raw := e.srv.ClientURL()
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	if ip := net.ParseIP(u.Hostname()); ip != nil && ip.IsUnspecified() {
		lo := "127.0.0.1"
		if ip.To4() == nil {
			lo = "::1"
		}
		u.Host = net.JoinHostPort(lo, u.Port())
	}
	return u.String()
}

// Server is the underlying nats-server, for monitoring and tests.
func (e *Embedded) Server() *server.Server { return e.srv }

// Shutdown stops the server and waits until it has stopped. It is safe to
// call more than once and from several goroutines.
func (e *Embedded) Shutdown() {
	e.once.Do(func() {
		e.srv.Shutdown()
		e.srv.WaitForShutdown()
	})
}
