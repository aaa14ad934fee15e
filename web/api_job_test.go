package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/actors"
	"github.com/weirstream/weir/internal/poll"
	"github.com/weirstream/weir/samples/keycount"
	"github.com/weirstream/weir/web"
)

// runningJob runs keycount (slow count stage, checkpoints every 100 ms,
// chaos kills when killEvery > 0) until the test ends, and serves its page.
func runningJob(t *testing.T, killEvery time.Duration) *httptest.Server {
	t.Helper()
	g, err := keycount.Build(keycount.Config{Records: 1 << 40, Keys: 50, Parallelism: 2, SleepMs: 0.02})
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu   sync.Mutex
		jobs []*actors.Job
	)
	list := func() []*actors.Job { mu.Lock(); defer mu.Unlock(); return append([]*actors.Job(nil), jobs...) }
	srv := httptest.NewServer(web.Handler(web.NewLocalSource("local", list)))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	cp := weir.CheckpointConfig{Mode: weir.CheckpointUnaligned, Interval: 100 * time.Millisecond, Timeout: 30 * time.Second,
		Retain: 2, StateDir: t.TempDir()}
	sv := weir.DefaultSupervision()
	sv.MaxRestarts, sv.ChaosKillEvery, sv.ChaosSeed = 1000, killEvery, 7
	go func() {
		_, err := weir.Run(ctx, g, weir.WithCheckpoints(cp), weir.WithSupervision(sv),
			weir.WithJobObserver(func(j *actors.Job) { mu.Lock(); jobs = append(jobs, j); mu.Unlock() }))
		done <- err
	}()
	t.Cleanup(func() {
		srv.Close()
		cancel()
		if err := <-done; err != nil {
			t.Errorf("job: %v", err)
		}
	})
	return srv
}

// getJSON reads path into v and returns the status code.
func getJSON(t *testing.T, srv *httptest.Server, path string, v any) int {
	t.Helper()
	resp, err := http.Get(srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if v != nil {
		if err := json.Unmarshal(body, v); err != nil {
			t.Fatalf("GET %s: %v in %q", path, err, body)
		}
	}
	return resp.StatusCode
}

func TestAPIServesARunningJob(t *testing.T) {
	srv := runningJob(t, 0)
	var d web.JobDetail
	if !poll.Until(60*time.Second, 20*time.Millisecond, func() bool {
		d = web.JobDetail{}
		return getJSON(t, srv, "/api/jobs/keycount", &d) == http.StatusOK && len(d.Checkpoints) >= 2 && d.RecordsIn > 0
	}) {
		t.Fatalf("no job with 2 checkpoints within 60 s: %+v", d)
	}
	if d.State != "running" || d.MaxParallelism != 128 {
		t.Fatalf("state %q, max parallelism %d; want running, 128", d.State, d.MaxParallelism)
	}
	var ops []string
	for _, o := range d.Operators {
		ops = append(ops, fmt.Sprintf("%s/%s/%d", o.Name, o.Kind, o.Parallelism))
	}
	if got, want := strings.Join(ops, " "), "source/source/2 count/transform/2 sink/sink/2"; got != want {
		t.Fatalf("operators %q, want %q", got, want)
	}
	if len(d.Edges) != 2 || d.Edges[0] != (web.Edge{From: 0, To: 1, Partitioner: "hash"}) || d.Edges[1].From != 1 || d.Edges[1].To != 2 {
		t.Fatalf("edges %+v, want source→count by hash, count→sink", d.Edges)
	}
	// The key-group map of count: the job's first table, Flink's ranges.
	if len(d.KeyGroups) != 1 || d.KeyGroups[0].Operator != "count" || len(d.KeyGroups[0].Groups) != 128 {
		t.Fatalf("key groups %+v, want count's 128", d.KeyGroups)
	}
	for g, kg := range d.KeyGroups[0].Groups {
		want := g * 2 / 128
		if kg.Group != g || kg.Instance != want || kg.Task != fmt.Sprintf("count[%d]", want) || kg.Node != "local" ||
			len(kg.LocalOn) != 1 || kg.LocalOn[0] != "local" {
			t.Fatalf("key group %d: %+v, want instance %d on local, held locally", g, kg, want)
		}
	}
	tasks := map[string]web.Task{}
	for _, tk := range d.Tasks {
		tasks[tk.Name] = tk
	}
	if len(tasks) != 6 {
		t.Fatalf("tasks %+v, want 6", d.Tasks)
	}
	for _, name := range []string{"count[0]", "count[1]"} {
		tk := tasks[name]
		if !tk.Live || tk.KeyGroups != 64 || tk.StateBytes <= 0 || tk.RecordsIn <= 0 {
			t.Fatalf("%s: %+v; want live, 64 key groups, state bytes and records in", name, tk)
		}
	}
	for i, c := range d.Checkpoints {
		// Without incremental checkpoints a checkpoint writes its whole state.
		if c.Mode != "unaligned" || c.DurationMs <= 0 || c.StateBytes <= 0 || c.StateWrittenBytes != c.StateBytes || (i > 0 && c.ID <= d.Checkpoints[i-1].ID) {
			t.Fatalf("checkpoint %d: %+v in %+v", i, c, d.Checkpoints)
		}
	}
	// Live numbers: the counters move and rates appear between two reads.
	src0 := tasks["source[0]"].RecordsIn
	var d2 web.JobDetail
	if !poll.Until(30*time.Second, 50*time.Millisecond, func() bool {
		d2 = web.JobDetail{}
		getJSON(t, srv, "/api/jobs/keycount", &d2)
		return d2.RecordsIn > d.RecordsIn && d2.Operators[0].InPerS > 0 && d2.Tasks[0].RecordsIn > src0 && d2.InPerS > 0
	}) {
		t.Fatalf("numbers did not move: first %+v, then %+v", d.JobSummary, d2.JobSummary)
	}
	var list []web.JobSummary
	if getJSON(t, srv, "/api/jobs", &list) != http.StatusOK || len(list) != 1 || list[0].Name != "keycount" || list[0].State != "running" {
		t.Fatalf("/api/jobs: %+v", list)
	}
	var nodes []web.Node
	if getJSON(t, srv, "/api/nodes", &nodes) != http.StatusOK || len(nodes) != 1 || nodes[0].ID != "local" ||
		len(nodes[0].Held) != 1 || nodes[0].Held[0].Operator != "count" {
		t.Fatalf("/api/nodes: %+v", nodes)
	}
	var kgs []web.KeyGroups
	if getJSON(t, srv, "/api/jobs/keycount/keygroups", &kgs) != http.StatusOK || len(kgs) != 1 || len(kgs[0].Groups) != 128 {
		t.Fatalf("/api/jobs/keycount/keygroups: %+v", kgs)
	}
	var e map[string]string
	if code := getJSON(t, srv, "/api/jobs/nosuchjob", &e); code != http.StatusNotFound || !strings.Contains(e["error"], "no such job") {
		t.Fatalf("unknown job: %d %v, want 404 and an error", code, e)
	}
	if code := getJSON(t, srv, "/api/nosuchpath", &e); code != http.StatusNotFound {
		t.Fatalf("unknown API path: %d, want 404", code)
	}
	page := getPage(t, srv.URL+"/")
	for _, want := range []string{`id="graph"`, `id="ckpt-chart"`, `id="kg-map"`, `src="app.js"`} {
		if !strings.Contains(page, want) {
			t.Fatalf("page lacks %s", want)
		}
	}
	if js := getPage(t, srv.URL+"/app.js"); !strings.Contains(js, "api/jobs") {
		t.Fatal("app.js does not poll the API")
	}
}

func TestAPITimelineShowsFailuresRestartsAndRestores(t *testing.T) {
	srv := runningJob(t, 300*time.Millisecond)
	var d web.JobDetail
	kinds := map[string]int{}
	if !poll.Until(90*time.Second, 50*time.Millisecond, func() bool {
		d = web.JobDetail{}
		getJSON(t, srv, "/api/jobs/keycount", &d)
		kinds = map[string]int{}
		for _, e := range d.Timeline {
			kinds[e.Kind]++
		}
		return kinds[actors.EventKill] > 0 && kinds[actors.EventRestart] > 0 && kinds[actors.EventRestore] > 0 && d.Failures.Restarts > 0
	}) {
		t.Fatalf("timeline %v, failures %+v: want kills, restarts and restores", kinds, d.Failures)
	}
	if d.Restores.Count == 0 || d.Restores.LocalBytes+d.Restores.RemoteBytes == 0 {
		t.Fatalf("restores %+v: want restored bytes", d.Restores)
	}
	for i, e := range d.Timeline {
		if e.At.IsZero() || (i > 0 && e.At.Before(d.Timeline[i-1].At)) {
			t.Fatalf("timeline not in time order at %d: %+v", i, d.Timeline)
		}
	}
	for _, c := range d.Failures.Causes {
		if c.Kind != actors.EventFailure || c.Task == "" || c.Detail == "" {
			t.Fatalf("failure cause %+v: want a task and a cause", c)
		}
	}
}

func getPage(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v", url, resp.StatusCode, err)
	}
	return string(b)
}
