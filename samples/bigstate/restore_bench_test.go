package bigstate

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/actors"
	"github.com/weirstream/weir/internal/graphplan"
	"github.com/weirstream/weir/internal/natstest"
	"github.com/weirstream/weir/store"
)

// benchKeys and benchValueBytes size BenchmarkRestore's state: 262144 keys
// × 256 B ≈ 64 MB of values. BIGSTATE_BENCH_KEYS overrides the keys.
const benchKeys, benchValueBytes = 262144, 256

// BenchmarkRestore restores ~64 MB of bigstate's keyed state from a
// checkpoint in the JetStream object store of an embedded nats-server
// (file storage): "local" through a Mirror whose local copy holds the
// checkpoint, "remote" from JetStream alone (a node without a local copy).
// It reports, per restore, restore-ms (the slowest task's restore, reading
// and loading its state), read-ms (the slowest task's reading alone),
// local-MB and remote-MB read.
func BenchmarkRestore(b *testing.B) {
	keys := benchKeys
	if s := os.Getenv("BIGSTATE_BENCH_KEYS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			b.Fatalf("BIGSTATE_BENCH_KEYS=%q: want a positive integer", s)
		}
		keys = n
	}
	js := natstest.Start(b, natstest.Options{JetStream: true}).JetStream(b)
	primary, err := store.NewJetStream(js, store.WithBucketPrefix("bench-"))
	if err != nil {
		b.Fatal(err)
	}
	local, err := store.NewLocal(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	mirror := &store.Mirror{Primary: primary, Local: local, Log: zerolog.Nop()}
	b.Cleanup(func() { mirror.Close() })
	// Fill the state: one record per key, a final checkpoint at the end.
	runBigstate(b, mirror, keys, "")
	m, err := primary.Latest(context.Background(), "bigstate")
	if err != nil {
		b.Fatal(err)
	}
	id := strconv.FormatUint(m.CheckpointID, 10)
	var stateBytes int64
	for _, ts := range m.Tasks {
		for _, ref := range ts.KeyGroups {
			stateBytes += ref.Size
		}
	}
	b.Logf("checkpoint %d: %d keys × %d B, %.1f MB of key-group sections", m.CheckpointID, keys, benchValueBytes, float64(stateBytes)/1e6)
	for _, v := range []struct {
		name string
		st   store.Store
	}{{"local", mirror}, {"remote", primary}} {
		b.Run(v.name, func(b *testing.B) {
			var restoring, reading time.Duration // per run, of its slowest task
			var read store.ReadStats
			for i := 0; i < b.N; i++ {
				rs := runBigstate(b, v.st, keys, id)
				var took, readTook time.Duration
				for _, r := range rs.History {
					took, readTook = max(took, r.Took), max(readTook, r.Read.Took)
				}
				restoring += took
				reading += readTook
				read.Add(rs.Read)
			}
			b.ReportMetric(float64(restoring)/float64(time.Millisecond)/float64(b.N), "restore-ms")
			b.ReportMetric(float64(reading)/float64(time.Millisecond)/float64(b.N), "read-ms")
			b.ReportMetric(float64(read.LocalBytes)/1e6/float64(b.N), "local-MB")
			b.ReportMetric(float64(read.RemoteBytes)/1e6/float64(b.N), "remote-MB")
		})
	}
}

// runBigstate runs bigstate with keys records (one per key) on a fresh actor
// node with st as its checkpoint store, restoring checkpoint restore when
// not "", and returns its restore figures.
func runBigstate(b *testing.B, st store.Store, keys int, restore string) actors.RestoreStats {
	b.Helper()
	g, err := Build(Config{Records: int64(keys), Keys: keys, ValueBytes: benchValueBytes, Parallelism: 2})
	if err != nil {
		b.Fatal(err)
	}
	p, err := graphplan.Of(g)
	if err != nil {
		b.Fatal(err)
	}
	log := zerolog.New(os.Stderr).Level(zerolog.ErrorLevel)
	cfg := weir.RunConfig{Restore: restore, Logger: log, Checkpoint: weir.CheckpointConfig{
		Mode: weir.CheckpointAligned, Interval: time.Hour, Timeout: 5 * time.Minute, Retain: 1000}}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	rt, err := weir.RuntimeFor(ctx, g, cfg, st)
	if err != nil {
		b.Fatal(err)
	}
	node := actors.NewNode(log)
	defer node.Shutdown()
	job, err := node.Submit(p, rt)
	if err != nil {
		b.Fatal(err)
	}
	select {
	case <-job.Done():
	case <-ctx.Done():
		b.Fatal("bigstate did not end within 10 minutes")
	}
	if err := job.Err(); err != nil {
		b.Fatalf("bigstate: %v", err)
	}
	return job.Restores()
}
