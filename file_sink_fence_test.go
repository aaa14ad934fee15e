package weir

import (
	"bufio"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/weirstream/weir/internal/poll"
	"github.com/weirstream/weir/internal/vfs"
)

// These tests play a zombie: sink instance A of a run that was replaced
// (its process paused past its lease, then resumed) goes on while B, the
// instance of the run that took over, restores the same file. A must not
// change a byte of the output or of B's staging after B's takeover.

// waitBound bounds every wait of these tests for a step of the other
// instance; it is never reached when the sink is right.
const waitBound = time.Minute

// pauseFS is the OS file system whose file writes to paths that match
// pause, once armed: the first such write signals entered and waits for
// release before it writes (a process stopped in the middle of a step).
type pauseFS struct {
	vfs.OS
	match    func(path string) bool
	mu       sync.Mutex
	armed    bool
	entered  chan struct{}
	release  chan struct{}
	released func()
}

func newPauseFS(match func(path string) bool) *pauseFS {
	p := &pauseFS{match: match, entered: make(chan struct{}), release: make(chan struct{})}
	p.released = sync.OnceFunc(func() { close(p.release) })
	return p
}

// arm makes the next matching write pause.
func (p *pauseFS) arm() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.armed = true
}

// take reports whether this write is the one to pause, disarming.
func (p *pauseFS) take(path string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.armed || !p.match(path) {
		return false
	}
	p.armed = false
	return true
}

func (p *pauseFS) OpenFile(path string, flag int, perm fs.FileMode) (vfs.File, error) {
	f, err := p.OS.OpenFile(path, flag, perm)
	if err != nil {
		return nil, err
	}
	return &pausingFile{File: f, fs: p}, nil
}

type pausingFile struct {
	vfs.File
	fs *pauseFS
}

func (f *pausingFile) Write(b []byte) (int, error) {
	if f.fs.take(f.Name()) {
		close(f.fs.entered)
		<-f.fs.release
	}
	return f.File.Write(b)
}

// awaitPaused waits until the paused write has begun.
func (p *pauseFS) awaitPaused(t *testing.T, what string) {
	t.Helper()
	select {
	case <-p.entered:
	case <-time.After(waitBound):
		t.Fatalf("%s never reached its write", what)
	}
}

// checkFenced checks that err says a zombie's step was fenced: instance
// generation 1 (A, the first Open) superseded by 2 (B's).
func checkFenced(t *testing.T, path, step string, err error) {
	t.Helper()
	want := "file sink " + path + ": fenced: instance generation 1 superseded by 2"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("the superseded instance's %s: %v, want an error saying %q", step, err, want)
	}
}

// checkStagingClean checks that no sealed checkpoint is left staged.
func checkStagingClean(t *testing.T, path string) {
	t.Helper()
	entries, err := os.ReadDir(StagingDir(path))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "pending-") {
			t.Errorf("%s left in the staging directory", e.Name())
		}
	}
}

// TestFileSinkSupersededInstanceIsFenced: A has committed checkpoint 1,
// sealed 2 (never completed) and buffered more lines when B restores
// checkpoint 1. A's Write, PrepareCommit, Commit and Recover then fail as
// fenced, and the output is exactly what B's checkpoints commit. Before,
// A's seal renamed B's staging file (A's lines in it) as its own pending
// checkpoint and B's next seal failed.
func TestFileSinkSupersededInstanceIsFenced(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.jsonl")
	a := openSink(t, path, false)
	defer a.Close()
	st1 := sealAndCommit(t, a, 1, true, 1, 2)
	sealAndCommit(t, a, 2, false, 3, 4)
	if err := a.Write([]line{{5}}); err != nil {
		t.Fatal(err)
	}

	b := openSink(t, path, true)
	defer b.Close()
	if err := b.Recover(1, st1); err != nil {
		t.Fatal(err)
	}

	checkFenced(t, path, "Write", a.Write([]line{{6}}))
	_, err := a.PrepareCommit(3)
	checkFenced(t, path, "PrepareCommit", err)
	checkFenced(t, path, "Commit", a.Commit(3))
	checkFenced(t, path, "Recover", a.Recover(2, nil))
	a.Close()

	sealAndCommit(t, b, 2, true, 3)
	sealAndCommit(t, b, 3, true, 4, 5)
	if got, want := readOut(t, path), lines(1, 2, 3, 4, 5); got != want {
		t.Fatalf("output:\n%s\nwant B's checkpoints exactly:\n%s", got, want)
	}
	checkStagingClean(t, path)
}

// TestFileSinkPausedWriteMissesItsSuccessor: A is paused inside a write
// of buffered lines to its staging file when B restores checkpoint 1 and
// stages its own lines; A's write then completes. It lands in A's own
// staging file, not in B's: B's checkpoint commits B's lines only. Before,
// both wrote the one staging file, A at its old offset, and B's checkpoint
// committed A's lines after B's first one.
func TestFileSinkPausedWriteMissesItsSuccessor(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.jsonl")
	pfs := newPauseFS(func(p string) bool { return filepath.Dir(p) == StagingDir(path) })
	a := &fileSink[line]{path: path, fs: pfs}
	if err := a.Open(TaskInfo{Operator: "sink", Parallelism: 1, Checkpointing: true}); err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	st1 := sealAndCommit(t, a, 1, true, 1, 2)

	// More than the write buffer, so Write writes to the staging file.
	big := make([]line, 2*flushAt/len(`{"n":1000000}`+"\n"))
	for i := range big {
		big[i] = line{1_000_000 + i}
	}
	pfs.arm()
	aWrote := make(chan error, 1)
	go func() { aWrote <- a.Write(big) }()
	defer pfs.released()
	pfs.awaitPaused(t, "A's write to its staging file")

	b := openSink(t, path, true)
	defer b.Close()
	if err := b.Recover(1, st1); err != nil {
		t.Fatal(err)
	}
	if err := b.Write([]line{{3}}); err != nil {
		t.Fatal(err)
	}
	pfs.released()
	select {
	case <-aWrote: // its first write went through, the rest may be fenced
	case <-time.After(waitBound):
		t.Fatal("A's write did not return once resumed")
	}
	_, err := a.PrepareCommit(2)
	checkFenced(t, path, "PrepareCommit", err)

	sealAndCommit(t, b, 2, true, 4)
	if got, want := readOut(t, path), lines(1, 2, 3, 4); got != want {
		t.Fatalf("output (%d bytes):\n%.300s\nwant B's checkpoints exactly:\n%s", len(got), got, want)
	}
	checkStagingClean(t, path)
}

// TestFileSinkSuccessorWaitsForInstanceHoldingTheLock: A is paused in the
// middle of committing checkpoint 2 (appending to the output) when B opens
// to restore checkpoint 1. B waits until A has finished that step, then
// takes over and truncates A's checkpoint 2 away. Before, B took over at
// once, and A, resumed, wrote checkpoint 2's lines at its old offset, after
// B had truncated the output back to checkpoint 1.
func TestFileSinkSuccessorWaitsForInstanceHoldingTheLock(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("sees a process waiting for a lock in /proc/locks (Linux)")
	}
	path := filepath.Join(t.TempDir(), "out.jsonl")
	pfs := newPauseFS(func(p string) bool { return p == path })
	a := &fileSink[line]{path: path, fs: pfs}
	if err := a.Open(TaskInfo{Operator: "sink", Parallelism: 1, Checkpointing: true}); err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	st1 := sealAndCommit(t, a, 1, true, 1, 2)
	sealAndCommit(t, a, 2, false, 3, 4)

	pfs.arm()
	aCommitted := make(chan error, 1)
	go func() { aCommitted <- a.Commit(2) }()
	defer pfs.released()
	pfs.awaitPaused(t, "A's commit of checkpoint 2")

	b := &fileSink[line]{path: path, fs: vfs.OS{}}
	bRestored := make(chan error, 1)
	go func() {
		err := b.Open(TaskInfo{Operator: "sink", Parallelism: 1, Checkpointing: true, Restoring: true})
		if err == nil {
			err = b.Recover(1, st1)
		}
		bRestored <- err
	}()
	var bDone bool
	var bErr error
	waiting := poll.Until(waitBound, poll.Every, func() bool {
		select {
		case bErr = <-bRestored:
			bDone = true
			return true
		default:
			return lockWaited(t, filepath.Join(StagingDir(path), "lock"))
		}
	})
	switch {
	case bDone:
		t.Errorf("B restored while A was paused inside its commit: want B to wait for it")
	case !waiting:
		t.Fatal("B neither restored nor waited for the lock")
	}

	pfs.released()
	select {
	case err := <-aCommitted:
		if err != nil {
			t.Fatalf("A's commit, begun before B's takeover: %v", err)
		}
	case <-time.After(waitBound):
		t.Fatal("A's commit did not return once resumed")
	}
	if !bDone {
		select {
		case bErr = <-bRestored:
		case <-time.After(waitBound):
			t.Fatal("B did not restore once A released the lock")
		}
	}
	if bErr != nil {
		t.Fatal(bErr)
	}
	defer b.Close()
	if got, want := readOut(t, path), lines(1, 2); got != want {
		t.Fatalf("output after B restored checkpoint 1:\n%s\nwant:\n%s", got, want)
	}
	checkFenced(t, path, "Commit", a.Commit(2))
	sealAndCommit(t, b, 2, true, 3)
	if got, want := readOut(t, path), lines(1, 2, 3); got != want {
		t.Fatalf("output:\n%s\nwant B's checkpoints exactly:\n%s", got, want)
	}
	checkStagingClean(t, path)
}

// lockWaited reports whether /proc/locks shows a process waiting for the
// flock on the file at path.
func lockWaited(t *testing.T, path string) bool {
	t.Helper()
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	ino := ":" + strconv.FormatUint(st.Sys().(*syscall.Stat_t).Ino, 10)
	f, err := os.Open("/proc/locks")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// "2: -> FLOCK  ADVISORY  WRITE 31361 fe:00:10833393 0 EOF"
		fields := strings.Fields(sc.Text())
		if len(fields) > 6 && fields[1] == "->" && fields[2] == "FLOCK" && strings.HasSuffix(fields[6], ino) {
			return true
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return false
}

// TestFileSinkRestoresAnOlderVersionsStaging: a staging directory of a
// version before generations (no lock, no fence, the staging file named
// "current") restores: the sealed checkpoint is committed, the unsealed
// lines are dropped.
func TestFileSinkRestoresAnOlderVersionsStaging(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.jsonl")
	dir := StagingDir(path)
	for name, data := range map[string]string{
		path:                               lines(1, 2),
		filepath.Join(dir, pendingName(2)): lines(3),
		filepath.Join(dir, "current"):      lines(9),
	} {
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := openSink(t, path, true)
	defer s.Close()
	if err := s.Recover(2, encodeCommittedSize(int64(len(lines(1, 2, 3))))); err != nil {
		t.Fatal(err)
	}
	sealAndCommit(t, s, 3, true, 4)
	if got, want := readOut(t, path), lines(1, 2, 3, 4); got != want {
		t.Fatalf("output:\n%s\nwant:\n%s", got, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "current")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the older version's staging file: %v, want it removed", err)
	}
	checkStagingClean(t, path)
}
