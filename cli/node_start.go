package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"

	"github.com/weirstream/weir/cluster"
	"github.com/weirstream/weir/cluster/node"
	"github.com/weirstream/weir/metrics"
	"github.com/weirstream/weir/transport"
)

// startFlags are the flags of `node start`.
type startFlags struct {
	id, workdir      string
	embed            string
	embedUser        string
	embedPassword    string
	embedToken       string
	embedConfig      string
	embedTLSCert     string
	embedTLSKey      string
	embedTLSCA       string
	embedMonitor     string
	slots            int
	heartbeatTimeout time.Duration
	placementTimeout time.Duration
	localWait        time.Duration
	disconnectGrace  time.Duration
	localRecovery    bool
	directIO         bool
	pretty           bool
	logLevel         string
	cpuProfile       string
	http             string
	conn             cluster.ConnOptions
}

// newStartFlagSet declares the flags of `node start`.
func newStartFlagSet(f *startFlags) *flag.FlagSet {
	fs := flag.NewFlagSet("node start", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	fs.StringVar(&f.id, "id", "", "this node's id (letters, digits, - and _); the same id with the same --workdir finds its state again")
	fs.StringVar(&f.workdir, "workdir", "", "working `DIR` of this node: its copy of checkpoint state and the embedded NATS store")
	fs.StringVar(&f.embed, "embed-nats", "", "run a NATS server with JetStream in this node, listening on `HOST:PORT`, for the others to join")
	fs.StringVar(&f.embedUser, "embed-user", "", "with --embed-nats: clients must log in as this user (with --embed-password)")
	fs.StringVar(&f.embedPassword, "embed-password", "", "with --embed-nats: the password of --embed-user")
	fs.StringVar(&f.embedToken, "embed-token", "", "with --embed-nats: clients must present this token")
	fs.StringVar(&f.embedConfig, "embed-config", "", "with --embed-nats: a nats-server configuration `FILE` (accounts, permissions, TLS)")
	fs.StringVar(&f.embedTLSCert, "embed-tls-cert", "", "with --embed-nats: server certificate `FILE` (PEM) to serve TLS")
	fs.StringVar(&f.embedTLSKey, "embed-tls-key", "", "with --embed-nats: private key `FILE` of --embed-tls-cert")
	fs.StringVar(&f.embedTLSCA, "embed-tls-ca", "", "with --embed-nats: CA `FILE` that client certificates must be signed by (mutual TLS)")
	fs.StringVar(&f.embedMonitor, "embed-monitor", "", "with --embed-nats: serve NATS's HTTP monitoring (/varz, /connz, /subsz) on `HOST:PORT`")
	fs.IntVar(&f.slots, "slots", 8, "task instances this node runs at most")
	fs.DurationVar(&f.heartbeatTimeout, "heartbeat-timeout", 3*time.Second, "a node silent this long is declared dead and its tasks restart elsewhere")
	fs.DurationVar(&f.disconnectGrace, "disconnect-grace", node.DefaultDisconnectGrace,
		"a node whose connection to NATS stays closed this long (NATS answers its probes with no responders) is declared dead without waiting for --heartbeat-timeout; a connection back within it is no death")
	fs.DurationVar(&f.placementTimeout, "placement-timeout", node.DefaultPlacementTimeout,
		"a job that does not fit on the live nodes' free slots waits this long for nodes to join or slots to free, then fails with the reason")
	fs.DurationVar(&f.localWait, "local-wait", node.DefaultLocalWait,
		"the tasks of a node declared dead wait this long for it to return with its workdir (their state local there) before they restart elsewhere; 0: no wait (a node back before it is declared dead gets its tasks back anyway)")
	fs.BoolVar(&f.localRecovery, "local-recovery", true,
		"restore tasks from this node's copy of their state in --workdir when it is there and verifies; false: always read the checkpoint store (the copy is still kept)")
	fs.BoolVar(&f.directIO, "checkpoint-direct-io", false,
		"write this node's copy of checkpoint state in --workdir past the page cache (direct I/O, on Linux where the file system allows it): less CPU per checkpoint and no dirty pages to write back; a local restore reads it from the disk")
	fs.BoolVar(&f.pretty, "pretty", false, "human-readable logs on stderr (default: JSON logs)")
	fs.StringVar(&f.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	fs.StringVar(&f.http, "http", "", "serve this node's web page at /, its JSON API at /api/ and Prometheus metrics at /metrics on `HOST:PORT` (port 0: a free one, logged)")
	fs.StringVar(&f.cpuProfile, "cpuprofile", "", "write a CPU profile of this node to `FILE` until it stops (read it with go tool pprof)")
	cluster.RegisterConnFlags(fs, &f.conn)
	return fs
}

// check validates the flags of `node start`.
func (f *startFlags) check(set map[string]bool) error {
	switch {
	case f.id == "":
		return errors.New("--id is required")
	case f.workdir == "":
		return errors.New("--workdir is required")
	case f.slots < 1:
		return fmt.Errorf("--slots %d must be at least 1", f.slots)
	case f.heartbeatTimeout < node.MinHeartbeatTimeout:
		return fmt.Errorf("--heartbeat-timeout %v must be at least %v", f.heartbeatTimeout, node.MinHeartbeatTimeout)
	case f.disconnectGrace <= 0 || f.disconnectGrace > f.heartbeatTimeout:
		return fmt.Errorf("--disconnect-grace %v must be positive and at most --heartbeat-timeout %v", f.disconnectGrace, f.heartbeatTimeout)
	case f.localWait < 0 || f.localWait > node.MaxPlacementTimeout:
		return fmt.Errorf("--local-wait %v must be between 0 and %v", f.localWait, node.MaxPlacementTimeout)
	case f.placementTimeout < 0 || f.placementTimeout > node.MaxPlacementTimeout:
		return fmt.Errorf("--placement-timeout %v must be between 0 and %v", f.placementTimeout, node.MaxPlacementTimeout)
	case f.embed != "" && set["nats"]:
		return errors.New("--embed-nats and --nats exclude each other: a node embeds a server or joins one")
	case f.embed == "" && (f.embedUser != "" || f.embedToken != "" || f.embedConfig != "" || f.embedTLSCert != "" || f.embedMonitor != ""):
		return errors.New("--embed-user, --embed-token, --embed-config, --embed-tls-* and --embed-monitor need --embed-nats")
	}
	if err := transport.ValidNode(f.id); err != nil {
		return fmt.Errorf("--id: %w", err)
	}
	return nil
}

// holdRescaleCommitEnv, set to 1 for `node start`, holds the live rescales
// of the jobs the node coordinates before their commit: a test hook to kill
// a coordinator while a rescale is in progress (node.Config).
const holdRescaleCommitEnv = "WEIR_TEST_HOLD_RESCALE_COMMIT"

// start is `node start`: a long-running cluster node.
func (r *registry) start(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var f startFlags
	fs := newStartFlagSet(&f)
	pos, err := parseInterleaved(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		writeFlagHelp(stdout, "node start --id ID --workdir DIR [--nats URL | --embed-nats HOST:PORT] [--slots N]",
			"Runs a long-lived cluster node. It runs parts of jobs for their coordinators,\ncoordinates the jobs submitted to it, and takes over jobs whose coordinator\ndied. SIGTERM leaves gracefully: its tasks move to other nodes first.", fs)
		return nil
	}
	if err != nil {
		return usagef("start: %s (run 'node start --help' for the flags)", doubleDash(err))
	}
	if len(pos) > 0 {
		return usagef("start: unexpected argument %q", pos[0])
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	if err := f.check(set); err != nil {
		return usagef("start: %v", err)
	}
	lr := runFlags{logLevel: f.logLevel}
	level, err := lr.level()
	if err != nil {
		return usagef("start: %v", err)
	}
	log := newLogger(stderr, level, f.pretty).With().Str("node", f.id).Logger()
	workdir, err := filepath.Abs(f.workdir)
	if err != nil {
		return fmt.Errorf("start: workdir: %w", err)
	}
	if err := os.MkdirAll(workdir, 0o755); err != nil {
		return fmt.Errorf("start: workdir: %w", err)
	}
	var httpLn net.Listener
	if f.http != "" {
		if httpLn, err = listenHTTP(f.http); err != nil {
			return usagef("start: %v", err)
		}
		defer httpLn.Close() // until it serves; closing it twice is harmless
	}
	if f.cpuProfile != "" {
		stop, err := startCPUProfile(f.cpuProfile)
		if err != nil {
			return fmt.Errorf("start: %w", err)
		}
		defer stop()
	}
	if f.embed != "" {
		e, err := cluster.StartEmbedded(cluster.EmbedOptions{HostPort: f.embed, StoreDir: filepath.Join(workdir, "nats"),
			User: f.embedUser, Password: f.embedPassword, Token: f.embedToken, ConfigFile: f.embedConfig,
			TLSCert: f.embedTLSCert, TLSKey: f.embedTLSKey, TLSCA: f.embedTLSCA, MonitorHostPort: f.embedMonitor}, log)
		if err != nil {
			return fmt.Errorf("start: embedded NATS: %w", err)
		}
		defer e.Shutdown()
		if !set["nats"] {
			f.conn.URL = e.ClientURL()
		}
		log.Info().Str("url", e.ClientURL()).Msg("embedded NATS server with JetStream running")
	}
	counters := &transport.Counters{}
	f.conn.Name = "weir node " + f.id
	var slow func(subject string) // set once the agent runs
	var slowMu sync.Mutex
	onSlow := func(subject string) {
		slowMu.Lock()
		defer slowMu.Unlock()
		if slow != nil {
			slow(subject)
		}
	}
	nc, err := f.conn.Connect(log, nats.ErrorHandler(natsErrors(counters, log, onSlow)))
	if err != nil {
		return fmt.Errorf("start: %w", err)
	}
	defer nc.Close()
	// A connection of its own for the checkpoint store: a checkpoint's or a
	// restore's megabytes then queue on it, not ahead of the heartbeats,
	// lease renewals and records on nc.
	so := f.conn
	so.Name = "weir node " + f.id + " checkpoint store"
	storeNC, err := so.Connect(log.With().Str("connection", "checkpoint store").Logger())
	if err != nil {
		return fmt.Errorf("start: checkpoint store connection: %w", err)
	}
	defer storeNC.Close()
	reg := metrics.New()
	a, err := node.Start(ctx, node.Config{ID: f.id, Workdir: workdir, Slots: f.slots, HeartbeatTimeout: f.heartbeatTimeout,
		PlacementTimeout: f.placementTimeout, LocalWait: f.localWait, DisconnectGrace: f.disconnectGrace, NoLocalRecovery: !f.localRecovery, DirectWrites: f.directIO, Jobs: r.clusterJob,
		Log: log, Counters: counters, Metrics: reg, HoldRescaleCommit: r.getenv(holdRescaleCommitEnv) == "1", StoreConn: storeNC}, nc)
	if err != nil {
		return fmt.Errorf("start: %w", err)
	}
	if httpLn != nil {
		srv := serveHTTP(httpLn, httpSource{Metrics: reg, Agent: a, Web: clusterWebSource(nc, a)}, log)
		defer srv.Close()
		announceWeb(stderr, log, srv)
	}
	slowMu.Lock()
	slow = a.SlowConsumer
	slowMu.Unlock()
	<-ctx.Done()
	log.Info().Msg("stopping: moving this node's work to the other nodes")
	a.Leave()
	a.Shutdown()
	log.Info().Msg("node stopped")
	return nil
}

// natsErrors counts slow-consumer events (messages the client dropped) and
// hands them to onSlow, which fails the actor fed by that subscription so
// the loss becomes a recovery; it logs every asynchronous error.
func natsErrors(counters *transport.Counters, log zerolog.Logger, onSlow func(subject string)) nats.ErrHandler {
	slow := transport.SlowConsumerHandler(counters, func(sub *nats.Subscription) {
		log.Error().Str("subject", sub.Subject).Msg("slow consumer: NATS dropped messages; failing the receiver to recover")
		onSlow(sub.Subject)
	})
	return func(nc *nats.Conn, sub *nats.Subscription, err error) {
		slow(nc, sub, err)
		ev := log.Warn().Err(err)
		if sub != nil {
			ev = ev.Str("subject", sub.Subject)
		}
		ev.Msg("NATS asynchronous error")
	}
}

// writeFlagHelp writes a command's usage line, description and flags.
func writeFlagHelp(w io.Writer, usage, about string, fs *flag.FlagSet) {
	fmt.Fprintf(w, "Usage:\n  %s\n\n%s\n\nFlags:\n", usage, about)
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
}
