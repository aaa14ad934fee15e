package cli

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/internal/logbuf"
	"github.com/weirstream/weir/internal/logcheck"
	"github.com/weirstream/weir/internal/poll"
	"github.com/weirstream/weir/internal/scrape"
	"github.com/weirstream/weir/metrics"
	"github.com/weirstream/weir/samples/keycount"
)

// metricsDeadline bounds each wait of the metrics tests.
const metricsDeadline = 60 * time.Second

// sum is a scraped family's sum over the metrics with labels; the test
// fails when none matched.
func sum(t *testing.T, f scrape.Families, name string, labels map[string]string) float64 {
	t.Helper()
	v, ok := f.Sum(name, labels)
	if !ok {
		t.Fatalf("no metric %s%v in the scrape", name, labels)
	}
	return v
}

// TestMetricsOfAFinishedRun runs keycount to its end with its metrics in a
// registry served on a real listener, scrapes /metrics over HTTP, parses it
// with the Prometheus text parser and checks names, types, labels and
// values: every record counted once in and once out per stage, the job's
// records in equal to its records out, checkpoints observed.
func TestMetricsOfAFinishedRun(t *testing.T) {
	reg := metrics.New()
	ln, err := listenHTTP("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := serveHTTP(ln, httpSource{Metrics: reg, Job: "keycount"}, zerolog.Nop())
	defer srv.Close()
	const n = 300_000
	g, err := keycount.Build(keycount.Config{Records: n, Keys: 100, Parallelism: 2, SleepMs: 0.0005})
	if err != nil {
		t.Fatal(err)
	}
	cp := weir.DefaultCheckpointConfig()
	cp.Interval, cp.StateDir = 10*time.Millisecond, t.TempDir()
	res, err := weir.Run(context.Background(), g, weir.WithMetrics(reg), weir.WithCheckpoints(cp))
	if err != nil {
		t.Fatal(err)
	}
	f, err := scrape.Get("http://" + ln.Addr().String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	for name, typ := range map[string]string{
		"weir_task_records_in_total": "COUNTER", "weir_task_records_out_total": "COUNTER",
		"weir_task_busy_seconds_total": "COUNTER", "weir_task_backpressured_seconds_total": "COUNTER",
		"weir_task_idle_seconds_total": "COUNTER", "weir_channel_buffers_queued": "GAUGE", "weir_channel_credits": "GAUGE",
		"weir_checkpoint_duration_seconds": "HISTOGRAM", "weir_checkpoint_alignment_seconds": "HISTOGRAM",
		"weir_checkpoint_state_bytes": "GAUGE", "weir_checkpoint_inflight_bytes": "GAUGE",
		"weir_job_records_in_total": "COUNTER", "weir_job_records_out_total": "COUNTER",
		"weir_restore_bytes_total": "COUNTER", "weir_node_tasks": "GAUGE",
	} {
		if got := f.Type(name); got != typ {
			t.Errorf("%s: type %q, want %s", name, got, typ)
		}
	}
	ops := f.LabelValues("weir_task_records_in_total", "operator")
	if strings.Join(ops, ",") != "count,sink,source" {
		t.Errorf("operators %v, want count, sink, source", ops)
	}
	if inst := f.LabelValues("weir_task_records_in_total", "instance"); len(inst) != 2 {
		t.Errorf("instances %v, want 0 and 1", inst)
	}
	job := map[string]string{"job": "keycount"}
	in, out := sum(t, f, "weir_job_records_in_total", job), sum(t, f, "weir_job_records_out_total", job)
	if in != n || out != n || int64(in) != res.RecordsIn {
		t.Errorf("job records in %v, out %v; want %d each (run: %d in)", in, out, n, res.RecordsIn)
	}
	for _, op := range []string{"source", "count", "sink"} {
		l := map[string]string{"job": "keycount", "operator": op}
		if in, out := sum(t, f, "weir_task_records_in_total", l), sum(t, f, "weir_task_records_out_total", l); in != n || out != n {
			t.Errorf("%s: records in %v, out %v; want %d each", op, in, out, n)
		}
	}
	if busy := sum(t, f, "weir_task_busy_seconds_total", map[string]string{"operator": "count"}); busy <= 0 {
		t.Errorf("count busy %v s, want > 0", busy)
	}
	if c := sum(t, f, "weir_checkpoint_duration_seconds", job); c < 1 || int(c) != len(res.Checkpoints) {
		t.Errorf("checkpoint histogram count %v, want ≥ 1 and the run's %d", c, len(res.Checkpoints))
	}
	if c := sum(t, f, "weir_checkpoints_completed_total", job); int(c) != len(res.Checkpoints) {
		t.Errorf("checkpoints completed %v, want %d", c, len(res.Checkpoints))
	}
	// A finished task's time stands still: busy + backpressured + idle is
	// at most the run's duration (plus its actors' start), never growing.
	for _, op := range []string{"source", "count", "sink"} {
		l := map[string]string{"job": "keycount", "operator": op}
		life := sum(t, f, "weir_task_busy_seconds_total", l) + sum(t, f, "weir_task_backpressured_seconds_total", l) +
			sum(t, f, "weir_task_idle_seconds_total", l)
		again, err := scrape.Get("http://" + ln.Addr().String() + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		later := sum(t, again, "weir_task_busy_seconds_total", l) + sum(t, again, "weir_task_backpressured_seconds_total", l) +
			sum(t, again, "weir_task_idle_seconds_total", l)
		if later != life || life <= 0 {
			t.Errorf("%s: task time %v s, then %v s after the run; want the same, > 0", op, life, later)
		}
	}
	if tasks := sum(t, f, "weir_node_tasks", nil); tasks != 0 {
		t.Errorf("%v tasks still counted after the run", tasks)
	}
	if q := sum(t, f, "weir_channel_buffers_queued", job); q != 0 {
		t.Errorf("%v buffers still queued after the run", q)
	}
}

// TestRunServesMetricsWhileRunning runs `node run keycount --http
// 127.0.0.1:0` and scrapes the logged address while the job runs: the
// records counted move between two scrapes and a checkpoint is observed;
// once the run ends the listener is closed. No line the run logged has a
// duplicate key or a duration without its unit.
func TestRunServesMetricsWhileRunning(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr logbuf.Buffer
	done := make(chan int, 1)
	go func() {
		done <- MainContext(ctx, []string{"run", "keycount", "--http", "127.0.0.1:0", "--records", "-1", "--duration", "2m",
			"--keys", "100", "--sleep-ms", "0.001", "--checkpoint-interval", "20ms", "--state-dir", t.TempDir()}, &stdout, &stderr)
	}()
	var addr string
	if !poll.Until(metricsDeadline, 5*time.Millisecond, func() bool { addr = scrape.LoggedAddr(stderr.String()); return addr != "" }) {
		cancel()
		<-done
		t.Fatalf("no HTTP address logged:\n%s", stderr.String())
	}
	url := "http://" + addr + "/metrics"
	read := func() (records, checkpoints float64) {
		f, err := scrape.Get(url)
		if err != nil {
			t.Error(err)
			return 0, 0
		}
		r, _ := f.Sum("weir_task_records_in_total", map[string]string{"job": "keycount", "operator": "source"})
		c, _ := f.Sum("weir_checkpoint_duration_seconds", map[string]string{"job": "keycount"})
		return r, c
	}
	var first float64
	if !poll.Until(metricsDeadline, 10*time.Millisecond, func() bool { first, _ = read(); return first > 0 }) {
		t.Fatal("no records counted")
	}
	if !poll.Until(metricsDeadline, 10*time.Millisecond, func() bool { r, c := read(); return r > first && c >= 1 }) {
		r, c := read()
		t.Fatalf("records stayed at %v (first %v) or no checkpoint (%v)", r, first, c)
	}
	cancel()
	if code := <-done; code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if _, err := http.Get(url); err == nil {
		t.Error("the listener still answers after the run")
	}
	bad, err := logcheck.Problems(strings.NewReader(stderr.String()))
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bad {
		t.Errorf("log line: %s", b)
	}
	if len(stderr.Lines(`"message":"checkpoint completed"`)) == 0 {
		t.Errorf("no checkpoint line logged to check:\n%s", stderr.String())
	}
}

// TestHTTPFlagBadOrBusyAddress: a malformed --http or one already in use is
// a usage error naming the flag, before any job runs.
func TestHTTPFlagBadOrBusyAddress(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for _, c := range []struct{ addr, want string }{
		{"nonsense", "must be HOST:PORT"},
		{"127.0.0.1:", "has no port"},
		{"127.0.0.1:99999", "cannot listen"},
		{busy.Addr().String(), "cannot listen"},
	} {
		r := runMain(t, "run", "keycount", "--records", "10", "--http", c.addr)
		if r.code != ExitUsage || !strings.Contains(r.stderr, "--http") || !strings.Contains(r.stderr, c.want) {
			t.Errorf("run --http %s: exit %d, stderr %q; want usage error with %q", c.addr, r.code, r.stderr, c.want)
		}
		r = runMain(t, "start", "--id", "n1", "--workdir", t.TempDir(), "--http", c.addr)
		if r.code != ExitUsage || !strings.Contains(r.stderr, c.want) {
			t.Errorf("start --http %s: exit %d, stderr %q; want usage error with %q", c.addr, r.code, r.stderr, c.want)
		}
	}
}

// TestStatusWatchFlags: --interval needs --watch, must be at least --wait
// and at most an hour, and --watch excludes --json; each is a usage error
// before anything connects.
func TestStatusWatchFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--interval", "5s"}, "--interval needs --watch"},
		{[]string{"--watch", "--interval", "100ms"}, "must be at least --wait"},
		{[]string{"--watch", "--interval", "2h"}, "at most 1h"},
		{[]string{"--watch", "--wait", "0s"}, "--wait 0s must be positive"},
		{[]string{"--watch", "--json"}, "exclude each other"},
	} {
		r := runMain(t, append([]string{"status", "--nats", "nats://127.0.0.1:1"}, c.args...)...)
		if r.code != ExitUsage || !strings.Contains(r.stderr, c.want) {
			t.Errorf("status %v: exit %d, %q; want usage error with %q", c.args, r.code, r.stderr, c.want)
		}
	}
}

// BenchmarkScrapeAfterKeycount measures one scrape of /metrics (gather and
// encode, as the handler serves it) holding a keycount run's metrics at
// parallelism 4: the cost a Prometheus server adds per scrape interval.
func BenchmarkScrapeAfterKeycount(b *testing.B) {
	reg := metrics.New()
	g, err := keycount.Build(keycount.Config{Records: 200_000, Keys: 100, Parallelism: 4})
	if err != nil {
		b.Fatal(err)
	}
	cp := weir.DefaultCheckpointConfig()
	cp.Interval, cp.StateDir = 10*time.Millisecond, b.TempDir()
	if _, err := weir.Run(context.Background(), g, weir.WithMetrics(reg), weir.WithCheckpoints(cp)); err != nil {
		b.Fatal(err)
	}
	h := reg.Handler()
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Fatalf("status %d", w.Code)
		}
	}
}
