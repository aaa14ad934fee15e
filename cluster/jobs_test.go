package cluster

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestJobsRegistry(t *testing.T) {
	e := startServer(t, EmbedOptions{})
	ctx := testCtx(t)
	a, err := OpenJobs(ctx, newJS(t, e), DefaultJobBucket)
	if err != nil {
		t.Fatal(err)
	}
	b, err := OpenJobs(ctx, newJS(t, e), DefaultJobBucket) // another node
	if err != nil {
		t.Fatal(err)
	}
	if recs, err := a.List(ctx); err != nil || len(recs) != 0 {
		t.Fatalf("List of empty registry = %v, %v", recs, err)
	}
	j1 := JobRecord{Name: "wordcount", Args: []string{"--p", "4"}, Submitted: 42, State: JobRunning, Coordinator: "n1"}
	rev, err := a.Create(ctx, j1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Create(ctx, j1); !errors.Is(err, ErrJobExists) {
		t.Fatalf("second Create: %v, want ErrJobExists", err)
	}
	got, gotRev, err := b.Get(ctx, "wordcount")
	if err != nil || gotRev != rev || !reflect.DeepEqual(got, j1) {
		t.Fatalf("Get = %+v @%d %v, want %+v @%d", got, gotRev, err, j1, rev)
	}
	// b takes over coordination with a CAS; a's stale update fails.
	took := got
	took.Coordinator = "n2"
	if _, err := b.Update(ctx, took, gotRev); err != nil {
		t.Fatal(err)
	}
	stale := got
	stale.State = JobFinished
	if _, err := a.Update(ctx, stale, rev); !errors.Is(err, ErrJobChanged) {
		t.Fatalf("stale Update: %v, want ErrJobChanged", err)
	}
	if _, err := a.Put(ctx, JobRecord{Name: "alpha", State: JobFailed, Error: "boom"}); err != nil {
		t.Fatal(err)
	}
	recs, err := b.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || recs[0].Name != "alpha" || recs[1].Coordinator != "n2" {
		t.Fatalf("List = %+v", recs)
	}
	if _, _, err := a.Get(ctx, "nope"); !errors.Is(err, ErrJobNotFound) {
		t.Fatalf("Get unknown: %v, want ErrJobNotFound", err)
	}
	if err := a.Delete(ctx, "alpha"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := a.Get(ctx, "alpha"); !errors.Is(err, ErrJobNotFound) {
		t.Fatalf("Get deleted: %v, want ErrJobNotFound", err)
	}
	if recs, _ := a.List(ctx); len(recs) != 1 {
		t.Fatalf("List after delete = %+v", recs)
	}
	for _, r := range []JobRecord{
		{Name: "", State: JobRunning},
		{Name: "has space", State: JobRunning},
		{Name: "x", State: "paused"},
	} {
		if _, err := a.Put(ctx, r); err == nil {
			t.Errorf("Put(%+v) accepted", r)
		}
	}
}

func TestJobsWatch(t *testing.T) {
	e := startServer(t, EmbedOptions{})
	js := newJS(t, e)
	ctx := testCtx(t)
	jobs, err := OpenJobs(ctx, js, "jobs")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := jobs.Create(ctx, JobRecord{Name: "j1", State: JobRunning}); err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue(ctx, "jobs")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Put(ctx, "junk", []byte("\xc1\xc1")); err != nil {
		t.Fatal(err)
	}
	var (
		mu   sync.Mutex
		bads []string
	)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ch, err := jobs.Watch(wctx, func(key string, err error) {
		mu.Lock()
		defer mu.Unlock()
		bads = append(bads, key+": "+err.Error())
	})
	if err != nil {
		t.Fatal(err)
	}
	next := func() JobRecord {
		t.Helper()
		select {
		case r, ok := <-ch:
			if !ok {
				t.Fatal("watch channel closed early")
			}
			return r
		case <-time.After(10 * time.Second):
			t.Fatal("no job record within 10s")
		}
		return JobRecord{}
	}
	if r := next(); r.Name != "j1" || r.State != JobRunning {
		t.Fatalf("initial record %+v", r)
	}
	if _, err := jobs.Put(ctx, JobRecord{Name: "j1", State: JobCancelled}); err != nil {
		t.Fatal(err)
	}
	if r := next(); r.Name != "j1" || r.State != JobCancelled {
		t.Fatalf("update %+v", r)
	}
	if err := jobs.Delete(ctx, "j1"); err != nil {
		t.Fatal(err)
	}
	if _, err := jobs.Put(ctx, JobRecord{Name: "j2", State: JobRunning}); err != nil {
		t.Fatal(err)
	}
	if r := next(); r.Name != "j2" {
		t.Fatalf("after delete got %+v, want j2 (deletions are not sent)", r)
	}
	mu.Lock()
	if len(bads) != 1 || !strings.HasPrefix(bads[0], "junk: ") {
		t.Fatalf("bad records: %q", bads)
	}
	mu.Unlock()
	if _, err := jobs.List(ctx); err == nil || !strings.Contains(err.Error(), "junk") {
		t.Fatalf("List with a corrupt record: err = %v, want it named", err)
	}

	cancel()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case _, ok := <-ch:
			if !ok {
				return
			}
		case <-deadline:
			t.Fatal("watch channel not closed after cancel")
		}
	}
}
