package web_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/actors"
	"github.com/weirstream/weir/internal/poll"
	"github.com/weirstream/weir/samples/keycount"
	"github.com/weirstream/weir/web"
)

// pollEvery is the page's refresh interval.
const pollEvery = time.Second

// BenchmarkKeycountWithPage is keycount (30 M records, 1000 keys,
// parallelism 2, unaligned checkpoints every second) without the page and
// with it served and polled as the page does, every second. Each iteration
// runs the two back to back, so a busy machine slows both alike; it reports
// both rates and their ratio (page-%).
func BenchmarkKeycountWithPage(b *testing.B) {
	const n, k = 30_000_000, 1000
	var off, page float64
	for i := 0; i < b.N; i++ {
		off += runKeycount(b, n, k, false)
		page += runKeycount(b, n, k, true)
	}
	b.ReportMetric(off/float64(b.N), "off-records/s")
	b.ReportMetric(page/float64(b.N), "page-records/s")
	b.ReportMetric(100*page/off, "page-%")
}

// runKeycount runs keycount once and returns its records/s.
func runKeycount(b *testing.B, n int64, k int, withPage bool) float64 {
	g, err := keycount.Build(keycount.Config{Records: n, Keys: k, Parallelism: 2})
	if err != nil {
		b.Fatal(err)
	}
	cp := weir.CheckpointConfig{Mode: weir.CheckpointUnaligned, Interval: time.Second, Timeout: 30 * time.Second,
		Retain: 2, StateDir: b.TempDir()}
	opts := []weir.RunOption{weir.WithCheckpoints(cp)}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	if withPage {
		var mu sync.Mutex
		var jobs []*actors.Job
		srv := httptest.NewServer(web.Handler(web.NewLocalSource("local", func() []*actors.Job {
			mu.Lock()
			defer mu.Unlock()
			return append([]*actors.Job(nil), jobs...)
		})))
		defer srv.Close()
		opts = append(opts, weir.WithJobObserver(func(j *actors.Job) { mu.Lock(); jobs = append(jobs, j); mu.Unlock() }))
		wg.Add(1)
		go func() {
			defer wg.Done()
			tick := time.NewTicker(pollEvery)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					return
				case <-tick.C:
					for _, p := range []string{"/api/jobs", "/api/nodes", "/api/jobs/keycount"} {
						if resp, err := http.Get(srv.URL + p); err == nil {
							_, _ = io.Copy(io.Discard, resp.Body)
							resp.Body.Close()
						}
					}
				}
			}
		}()
	}
	res, err := weir.Run(context.Background(), g, opts...)
	close(stop)
	wg.Wait()
	if err != nil {
		b.Fatal(err)
	}
	if res.RecordsOut != n {
		b.Fatalf("records out %d, want %d", res.RecordsOut, n)
	}
	return res.RecordsPerSecond()
}

// BenchmarkPagePoll measures what one page refresh (the job list, the
// nodes and the job's detail) costs the process in CPU time, against a
// keycount job whose slow count stage keeps it nearly idle: CPU time is
// what a busy machine cannot distort. cpu-ms/refresh × 1 refresh/s over
// the job's cores is the page's share of them.
func BenchmarkPagePoll(b *testing.B) {
	g, err := keycount.Build(keycount.Config{Records: 1 << 40, Keys: 1000, Parallelism: 2, SleepMs: 5})
	if err != nil {
		b.Fatal(err)
	}
	cp := weir.CheckpointConfig{Mode: weir.CheckpointUnaligned, Interval: time.Second, Timeout: 30 * time.Second,
		Retain: 2, StateDir: b.TempDir()}
	var mu sync.Mutex
	var jobs []*actors.Job
	list := func() []*actors.Job { mu.Lock(); defer mu.Unlock(); return append([]*actors.Job(nil), jobs...) }
	srv := httptest.NewServer(web.Handler(web.NewLocalSource("local", list)))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := weir.Run(ctx, g, weir.WithCheckpoints(cp),
			weir.WithJobObserver(func(j *actors.Job) { mu.Lock(); jobs = append(jobs, j); mu.Unlock() }))
		done <- err
	}()
	defer func() { cancel(); <-done }()
	if !poll.Until(30*time.Second, 10*time.Millisecond, func() bool { return len(list()) > 0 }) {
		b.Fatal("the job did not start within 30 s")
	}
	refresh := func() {
		for _, p := range []string{"/api/jobs", "/api/nodes", "/api/jobs/keycount"} {
			resp, err := http.Get(srv.URL + p)
			if err != nil {
				b.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}
	refresh()
	// The job's own CPU over the same wall time, without refreshes.
	idleStart, idleCPU := time.Now(), cpuTime()
	<-time.After(time.Second) // the measuring window
	idlePerS := (cpuTime() - idleCPU).Seconds() / time.Since(idleStart).Seconds()
	b.ResetTimer()
	start, cpu := time.Now(), cpuTime()
	for i := 0; i < b.N; i++ {
		refresh()
	}
	wall := time.Since(start)
	used := (cpuTime() - cpu).Seconds() - idlePerS*wall.Seconds()
	b.ReportMetric(1000*used/float64(b.N), "cpu-ms/refresh")
}
