package actors

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/store"
)

func TestUploaderRefusesWhenFullInsteadOfBlocking(t *testing.T) {
	u := newUploader(nil, 1, 2, shellDeadline)
	defer u.stop()
	started, gate := make(chan struct{}), make(chan struct{})
	if err := u.submit(func(context.Context) { close(started); <-gate }); err != nil {
		t.Fatalf("first submit: %v", err)
	}
	waitClosed(t, started, "the first upload to start")
	ran := make(chan int, 2)
	for i := 0; i < 2; i++ {
		if err := u.submit(func(context.Context) { ran <- i }); err != nil {
			t.Fatalf("submit %d into a queue of 2: %v", i, err)
		}
	}
	err := u.submit(func(context.Context) { t.Error("a refused upload ran") })
	if !errors.Is(err, errUploadsFull) {
		t.Fatalf("submit to a full queue: %v, want %v", err, errUploadsFull)
	}
	close(gate)
	for want := 0; want < 2; want++ {
		select {
		case got := <-ran:
			if got != want {
				t.Fatalf("queued upload %d ran, want %d (in order)", got, want)
			}
		case <-time.After(shellDeadline):
			t.Fatalf("queued upload %d did not run within %v", want, shellDeadline)
		}
	}
	u.stop()
	if err := u.submit(func(context.Context) {}); !errors.Is(err, errUploaderStopped) {
		t.Fatalf("submit after stop: %v, want %v", err, errUploaderStopped)
	}
}

func TestUploaderDeadlineEndsAHungUpload(t *testing.T) {
	u := newUploader(nil, 1, 1, 20*time.Millisecond)
	defer u.stop()
	ended := make(chan error, 1)
	if err := u.submit(func(c context.Context) { <-c.Done(); ended <- c.Err() }); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-ended:
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("hung upload ended with %v, want its deadline", err)
		}
	case <-time.After(shellDeadline):
		t.Fatalf("hung upload still running after %v", shellDeadline)
	}
}

func TestUploaderStopCancelsRunningUpload(t *testing.T) {
	u := newUploader(nil, 1, 1, time.Hour)
	started, ended := make(chan struct{}), make(chan error, 1)
	if err := u.submit(func(c context.Context) { close(started); <-c.Done(); ended <- c.Err() }); err != nil {
		t.Fatal(err)
	}
	waitClosed(t, started, "the upload to start")
	u.stop() // waits for the worker, so the upload has ended
	if err := <-ended; !errors.Is(err, context.Canceled) {
		t.Fatalf("upload ended with %v, want canceled by stop", err)
	}
}

// TestUploaderDrainLetsQueuedWorkFinish: drain waits for the running and
// the queued work (neither cancelled) and refuses new work at once.
func TestUploaderDrainLetsQueuedWorkFinish(t *testing.T) {
	u := newUploader(nil, 1, 2, time.Hour)
	started, gate := make(chan struct{}), make(chan struct{})
	errs := make(chan error, 2)
	if err := u.submit(func(c context.Context) { close(started); <-gate; errs <- c.Err() }); err != nil {
		t.Fatal(err)
	}
	if err := u.submit(func(c context.Context) { errs <- c.Err() }); err != nil {
		t.Fatal(err)
	}
	waitClosed(t, started, "the first upload to start")
	drained := make(chan struct{})
	go func() { defer close(drained); u.drain(time.Hour) }()
	for u.submit(func(context.Context) {}) == nil {
		// drain has not begun yet: what this queued runs before it ends
		runtime.Gosched()
	}
	close(gate)
	waitClosed(t, drained, "drain to return")
	for i := range 2 {
		if err := <-errs; err != nil {
			t.Fatalf("work %d ended with %v, want it to finish uncancelled", i, err)
		}
	}
	if err := u.submit(func(context.Context) {}); !errors.Is(err, errUploaderStopped) {
		t.Fatalf("submit after drain: %v, want errUploaderStopped", err)
	}
}

// TestUploaderDrainIsBounded: work that does not finish within drain's
// bound is cancelled, and drain returns.
func TestUploaderDrainIsBounded(t *testing.T) {
	u := newUploader(nil, 1, 1, time.Hour)
	started, ended := make(chan struct{}), make(chan error, 1)
	if err := u.submit(func(c context.Context) { close(started); <-c.Done(); ended <- c.Err() }); err != nil {
		t.Fatal(err)
	}
	waitClosed(t, started, "the upload to start")
	u.drain(time.Millisecond)
	if err := <-ended; !errors.Is(err, context.Canceled) {
		t.Fatalf("hung upload ended with %v, want cancelled after the bound", err)
	}
	u.drain(time.Hour) // after stop: returns at once
}

// hungStore is a store whose PutBlob blocks until its context ends.
type hungStore struct {
	store.Store
	entered chan struct{} // gets a value each time PutBlob is entered
}

func (s *hungStore) PutBlob(ctx context.Context, _ string, _ uint64, _ string, _ []byte) (store.BlobRef, error) {
	s.entered <- struct{}{}
	<-ctx.Done()
	return store.BlobRef{}, ctx.Err()
}

// hungTask starts a mid task of a chain whose store hangs, using uploader u,
// wired to a downstream probe and started.
func hungTask(t *testing.T, workers, depth int, deadline time.Duration) (*Node, *actor.PID, *probe, *probe, *hungStore) {
	t.Helper()
	n := startNode(t)
	p, mid := chainPlan("hung-store")
	j := shellJob(t, n, p, 8)
	hs := &hungStore{Store: j.opts.Checkpoint.Store, entered: make(chan struct{}, 16)}
	j.opts.Checkpoint.Store = hs
	useUploader(t, j, newUploader(nil, workers, depth, deadline))
	task, parent, _ := spawnTaskUnder(t, j, mid, nil)
	down := newProbe()
	downPID := spawnProbe(t, n, down)
	n.system.Root.Send(task, &wireMsg{outputs: [][]*actor.PID{{downPID}}})
	n.system.Root.Send(task, &startMsg{})
	return n, task, parent, down, hs
}

// overtakingOne is barrier id on input 0 overtaking one queued buffer, so the
// (stateless) task has channel state to store: a task with nothing to store
// uploads nothing.
func overtakingOne(id uint64) *barrierOvertakeMsg {
	return &barrierOvertakeMsg{input: 0, id: id, lastSeq: 1,
		overtaken: []*Buffer{{Seq: 1, Records: plan.Records[int64]{int64(id)}}}}
}

// TestTaskDeclinesCheckpointWhenStoreHangs: an upload that hangs past the
// uploader's deadline declines the task's checkpoint.
func TestTaskDeclinesCheckpointWhenStoreHangs(t *testing.T) {
	n, task, parent, _, hs := hungTask(t, 1, 4, 50*time.Millisecond)
	n.system.Root.Send(task, overtakingOne(5))
	waitEntered(t, hs)
	d := next[*taskDeclineMsg](t, parent, "the decline of checkpoint 5")
	if d.id != 5 || !strings.Contains(d.reason, context.DeadlineExceeded.Error()) {
		t.Fatalf("declined checkpoint %d with %q, want 5 with the upload's deadline", d.id, d.reason)
	}
}

// TestTaskDeclinesCheckpointWhenUploadsQueueFull: with the store hung and the
// upload queue full, a task declines its next checkpoint at once and goes on
// processing input, instead of blocking in the uploader.
func TestTaskDeclinesCheckpointWhenUploadsQueueFull(t *testing.T) {
	n, task, parent, down, hs := hungTask(t, 1, 1, time.Hour)
	root := n.system.Root
	root.Send(task, overtakingOne(5))
	waitEntered(t, hs) // 5 now holds the only worker
	// 6 is queued, 7 refused.
	root.Send(task, overtakingOne(6))
	root.Send(task, overtakingOne(7))
	d := next[*taskDeclineMsg](t, parent, "the decline of checkpoint 7")
	if d.id != 7 || !strings.Contains(d.reason, errUploadsFull.Error()) {
		t.Fatalf("declined checkpoint %d with %q, want 7 refused by a full queue", d.id, d.reason)
	}
	root.Send(task, &deliverMsg{input: 0, buf: &Buffer{Seq: 1, Records: plan.Records[int64]{42}}})
	for {
		if m, ok := next[any](t, down, "the record processed after the refusal").(*dataMsg); ok {
			if vs := recordsOf(t, m.buf); len(vs) != 1 || vs[0] != 42 {
				t.Fatalf("forwarded %v, want [42]", vs)
			}
			return
		}
	}
}

// waitEntered waits for the hung store's next PutBlob, failing after shellDeadline.
func waitEntered(t *testing.T, hs *hungStore) {
	t.Helper()
	select {
	case <-hs.entered:
	case <-time.After(shellDeadline):
		t.Fatalf("no upload reached the store within %v", shellDeadline)
	}
}

// TestUploaderDrainEndsWhenItsNodeQuits: once the node quits, drain does
// not wait out its bound for the work its workers hold (here until it is
// cancelled, which only the stop after the wait does).
func TestUploaderDrainEndsWhenItsNodeQuits(t *testing.T) {
	quit := make(chan struct{})
	u := newUploader(quit, 1, 2, time.Hour)
	started := make(chan struct{})
	if err := u.submit(func(c context.Context) { close(started); <-c.Done() }); err != nil {
		t.Fatal(err)
	}
	waitClosed(t, started, "the upload to start")
	close(quit)
	drained := make(chan struct{})
	go func() { defer close(drained); u.drain(time.Hour) }()
	waitClosed(t, drained, "drain to return after the node quit")
}
