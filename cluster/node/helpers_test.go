package node

import (
	"context"
	"flag"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/internal/natstest"
	"github.com/weirstream/weir/samples/keycount"
)

// startNATS runs an embedded nats-server with JetStream for one test.
func startNATS(t *testing.T) *server.Server {
	return natstest.Start(t, natstest.Options{JetStream: true}).Server
}

// connect opens a client connection to s, closed when the test ends.
func connect(t *testing.T, s *server.Server) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(s.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// testJobs builds the one job the tests run, the keycount sample, from
// --records, --keys, --parallelism, --out and --sleep-ms; an aligned
// checkpoint every 20ms.
func testJobs(name string, args []string) (*JobSpec, error) {
	if name != "keycount" {
		return nil, fmt.Errorf("unknown job %q (known: keycount)", name)
	}
	cfg := keycount.Config{Records: 1000, Keys: 10, Parallelism: 2}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Int64Var(&cfg.Records, "records", cfg.Records, "")
	fs.IntVar(&cfg.Keys, "keys", cfg.Keys, "")
	fs.IntVar(&cfg.Parallelism, "parallelism", cfg.Parallelism, "")
	fs.StringVar(&cfg.Out, "out", "", "")
	fs.Float64Var(&cfg.SleepMs, "sleep-ms", 0, "")
	if err := fs.Parse(args); err != nil {
		return nil, fmt.Errorf("job %s: %w", name, err)
	}
	g, err := keycount.Build(cfg)
	if err != nil {
		return nil, err
	}
	run := weir.RunConfig{Checkpoint: weir.CheckpointConfig{Mode: weir.CheckpointAligned, Interval: 20 * time.Millisecond,
		Timeout: 30 * time.Second, Retain: 3}}
	return &JobSpec{Graph: g, Run: run, Out: cfg.Out}, nil
}

// startAgent starts an agent named id over nc, shut down when the test ends.
func startAgent(t *testing.T, nc *nats.Conn, id string, slots int, heartbeatTimeout time.Duration) *Agent {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a, err := Start(ctx, Config{ID: id, Workdir: t.TempDir(), Slots: slots, HeartbeatTimeout: heartbeatTimeout,
		PlacementTimeout: 10 * time.Second, Jobs: testJobs, Log: zerolog.Nop()}, nc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Shutdown)
	return a
}

// agentTestHeartbeat is the heartbeat timeout of the in-process agent
// tests: short enough for quick takeovers, long enough that a node starved
// by a loaded machine under the race detector is not declared dead over and
// over (at 500 ms, a fully loaded machine saw 19 takeovers in a minute).
const agentTestHeartbeat = 2 * time.Second
