package bigstate

import (
	"context"
	"maps"
	"os"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/actors"
	"github.com/weirstream/weir/internal/cputime"
	"github.com/weirstream/weir/internal/graphplan"
	"github.com/weirstream/weir/internal/natstest"
	"github.com/weirstream/weir/state"
	"github.com/weirstream/weir/store"
)

// benchKeys and benchValueBytes size BenchmarkRestore's state: 262144 keys
// × 256 B ≈ 64 MB of values. BIGSTATE_BENCH_KEYS overrides the keys.
const benchKeys, benchValueBytes = 262144, 256

// restoreBench is bigstate's state in a checkpoint in the JetStream object
// store of an embedded nats-server (file storage), with a node's local copy
// of it beside: mirror reads the local copy first, primary is JetStream
// alone (a node without a local copy).
type restoreBench struct {
	keys    int
	mirror  *store.Mirror
	primary store.Store
	m       *store.Manifest
	id      string
}

// newRestoreBench fills bigstate's state: one record per key, a final
// checkpoint at the end.
func newRestoreBench(b *testing.B) *restoreBench {
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
	runBigstate(b, mirror, keys, "")
	m, err := primary.Latest(context.Background(), "bigstate")
	if err != nil {
		b.Fatal(err)
	}
	var stateBytes int64
	for _, ts := range m.Tasks {
		for _, ref := range ts.KeyGroups {
			stateBytes += ref.Size
		}
	}
	b.Logf("checkpoint %d: %d keys × %d B, %.1f MB of key-group sections", m.CheckpointID, keys, benchValueBytes, float64(stateBytes)/1e6)
	return &restoreBench{keys: keys, mirror: mirror, primary: primary, m: m, id: strconv.FormatUint(m.CheckpointID, 10)}
}

// BenchmarkRestore restores bigstate's keyed state (~64 MB, or sized by
// BIGSTATE_BENCH_KEYS) from the checkpoint of restoreBench.
//
//   - local, remote: the job restored on a fresh actor node through the
//     Mirror ("local") or from JetStream alone ("remote"), b.N times; per
//     restore (means) restore-ms (the slowest task's restore, reading and
//     loading its state), read-ms (the slowest task's reading alone),
//     local-MB and remote-MB read.
//   - alternating: each iteration restores the job once locally and once
//     remotely, one right after the other, so both see the same load on a
//     shared machine; it logs every pair and reports the medians of both
//     restore-ms and of their ratio (remote/local).
//   - path: the restore path without the job: every task's key-group
//     sections read (store.EachSectionKept, as a task does) and decoded
//     into a state backend that adopts them, GOMAXPROCS groups at a time
//     in parallel (as a task does), locally then remotely in each
//     iteration; medians of wall and process CPU time (the remote CPU
//     includes the in-process nats-server serving the read) and of their
//     ratios. CPU time is what a busy machine does not inflate.
func BenchmarkRestore(b *testing.B) {
	rb := newRestoreBench(b)
	for _, v := range []struct {
		name string
		st   store.Store
	}{{"local", rb.mirror}, {"remote", rb.primary}} {
		b.Run(v.name, func(b *testing.B) {
			var restoring, reading time.Duration
			var read store.ReadStats
			for i := 0; i < b.N; i++ {
				r := rb.restoreJob(b, v.st)
				restoring += r.took
				reading += r.read
				read.Add(r.stats)
			}
			b.ReportMetric(ms(restoring)/float64(b.N), "restore-ms")
			b.ReportMetric(ms(reading)/float64(b.N), "read-ms")
			b.ReportMetric(float64(read.LocalBytes)/1e6/float64(b.N), "local-MB")
			b.ReportMetric(float64(read.RemoteBytes)/1e6/float64(b.N), "remote-MB")
		})
	}
	b.Run("alternating", func(b *testing.B) {
		var local, remote, ratio []float64
		for i := 0; i < b.N; i++ {
			l := rb.restoreJob(b, rb.mirror)
			r := rb.restoreJob(b, rb.primary)
			if l.stats.RemoteBytes != 0 || r.stats.LocalBytes != 0 {
				b.Fatalf("pair %d: local restore read %d bytes remotely, remote one %d bytes locally", i, l.stats.RemoteBytes, r.stats.LocalBytes)
			}
			local, remote = append(local, ms(l.took)), append(remote, ms(r.took))
			ratio = append(ratio, ms(r.took)/ms(l.took))
			b.Logf("pair %d: local restore %.1f ms (read %.1f ms, %.1f MB local), remote %.1f ms (read %.1f ms, %.1f MB remote): %.1f×",
				i, ms(l.took), ms(l.read), float64(l.stats.LocalBytes)/1e6, ms(r.took), ms(r.read), float64(r.stats.RemoteBytes)/1e6, ratio[i])
		}
		b.ReportMetric(median(local), "local-restore-ms")
		b.ReportMetric(median(remote), "remote-restore-ms")
		b.ReportMetric(median(ratio), "remote/local")
	})
	b.Run("path", func(b *testing.B) {
		var lw, rw, lc, rc, wallRatio, cpuRatio []float64
		for i := 0; i < b.N; i++ {
			l := rb.restorePath(b, rb.mirror)
			r := rb.restorePath(b, rb.primary)
			lw, rw, lc, rc = append(lw, ms(l.wall)), append(rw, ms(r.wall)), append(lc, ms(l.cpu)), append(rc, ms(r.cpu))
			wallRatio = append(wallRatio, ms(r.wall)/ms(l.wall))
			cpuRatio = append(cpuRatio, ms(r.cpu)/ms(l.cpu))
			b.Logf("pair %d: local %.1f ms wall, %.1f ms CPU (%.1f MB local, %d keys); remote %.1f ms wall, %.1f ms CPU (%.1f MB remote): %.1f× wall, %.1f× CPU",
				i, ms(l.wall), ms(l.cpu), float64(l.stats.LocalBytes)/1e6, l.keys, ms(r.wall), ms(r.cpu), float64(r.stats.RemoteBytes)/1e6, wallRatio[i], cpuRatio[i])
		}
		b.ReportMetric(median(lw), "local-ms")
		b.ReportMetric(median(lc), "local-cpu-ms")
		b.ReportMetric(median(rw), "remote-ms")
		b.ReportMetric(median(rc), "remote-cpu-ms")
		b.ReportMetric(median(wallRatio), "remote/local-wall")
		b.ReportMetric(median(cpuRatio), "remote/local-cpu")
	})
}

// jobRestore is one restore of the whole job: its slowest task's restore
// and reading time, and what all tasks read.
type jobRestore struct {
	took, read time.Duration
	stats      store.ReadStats
}

// restoreJob runs bigstate restoring the checkpoint from st.
func (rb *restoreBench) restoreJob(b *testing.B, st store.Store) jobRestore {
	rs := runBigstate(b, st, rb.keys, rb.id)
	var r jobRestore
	for _, h := range rs.History {
		r.took, r.read = max(r.took, h.Took), max(r.read, h.Read.Took)
	}
	r.stats = rs.Read
	return r
}

// pathRestore is one restore of every task's key groups without the job.
type pathRestore struct {
	wall, cpu time.Duration
	stats     store.ReadStats
	keys      int
}

// restorePath reads every fill task's key-group sections from st, one task
// after the other, and decodes them into a fresh state backend as the
// task's would (batches of GOMAXPROCS adopted sections decoded in
// parallel), checking the keys restored.
func (rb *restoreBench) restorePath(b *testing.B, st store.Store) pathRestore {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var r pathRestore
	c0, w0 := cputime.Now(), time.Now()
	for _, ts := range rb.m.Tasks {
		if len(ts.KeyGroups) == 0 {
			continue
		}
		backend := state.NewBackend(rb.m.MaxParallelism)
		values := state.NewValueTable[Entry]("value", rb.m.MaxParallelism)
		if _, err := backend.Register(values); err != nil {
			b.Fatal(err)
		}
		groups := slices.Sorted(maps.Keys(ts.KeyGroups))
		secs := make([]store.SectionRequest, len(groups))
		for i, g := range groups {
			secs[i] = store.SectionRequest{Key: store.KeyGroupKey(ts.Operator, g), Ref: ts.KeyGroups[g]}
		}
		var batch []state.GroupBlob
		flush := func() error {
			err := backend.RestoreGroups(batch, true)
			batch = batch[:0]
			return err
		}
		stats, err := store.EachSectionKept(ctx, st, rb.m.Job, rb.m.CheckpointID, secs, func(i int, data []byte) error {
			batch = append(batch, state.GroupBlob{Group: groups[i], Blob: data, CRC: secs[i].Ref.CRC32C, CRCKnown: true})
			if len(batch) < runtime.GOMAXPROCS(0) {
				return nil
			}
			return flush()
		})
		if err == nil {
			err = flush()
		}
		if err != nil {
			b.Fatalf("task %s[%d]: %v", ts.Operator, ts.Instance, err)
		}
		r.stats.Add(stats)
		for _, g := range groups {
			r.keys += backend.GroupLen(g)
		}
	}
	r.wall, r.cpu = time.Since(w0), cputime.Now()-c0
	if r.keys != rb.keys {
		b.Fatalf("restored %d keys, want %d", r.keys, rb.keys)
	}
	return r
}

// ms is d in milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// median is the middle of xs (the mean of the two middle ones for an even
// count).
func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
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
