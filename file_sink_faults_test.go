package weir

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/weirstream/weir/internal/faultfs"
	"github.com/weirstream/weir/internal/vfs"
)

// completedCheckpoint is what the runtime keeps of a completed checkpoint
// for the sink: its id, the sink's state and how many input segments it
// covers (where the source resumes).
type completedCheckpoint struct {
	id      uint64
	state   []byte
	covered int
}

// sinkDriver drives a checkpointed file sink the way the runtime does: a
// checkpoint after each input segment (PrepareCommit, then Commit once it is
// complete), and a restart from the last completed checkpoint after a
// failure (Recover, then the segments after it).
type sinkDriver struct {
	path      string
	segs      [][]line
	nextID    uint64
	last      completedCheckpoint
	completed []completedCheckpoint
}

func newSinkDriver(path string, segs [][]line) *sinkDriver {
	return &sinkDriver{path: path, segs: segs, nextID: 1}
}

// open opens a sink on fsys; restoring recovers the last completed checkpoint.
func (d *sinkDriver) open(fsys vfs.FS) (*fileSink[line], error) {
	s := &fileSink[line]{path: d.path, fs: fsys}
	restoring := d.last.id > 0
	if err := s.Open(TaskInfo{Operator: "sink", Parallelism: 1, Checkpointing: true, Restoring: restoring}); err != nil {
		return s, err
	}
	if restoring {
		return s, s.Recover(d.last.id, d.last.state)
	}
	return s, nil
}

// runFrom writes the segments after the last completed checkpoint, one
// checkpoint each, and closes the sink.
func (d *sinkDriver) runFrom(s *fileSink[line]) error {
	for i := d.last.covered; i < len(d.segs); i++ {
		if err := s.Write(d.segs[i]); err != nil {
			return err
		}
		id := d.nextID
		d.nextID++
		state, err := s.PrepareCommit(id)
		if err != nil {
			return err
		}
		d.last = completedCheckpoint{id: id, state: state, covered: i + 1}
		d.completed = append(d.completed, d.last)
		if err := s.Commit(id); err != nil {
			return err
		}
	}
	return s.Close()
}

// attempt opens a sink on fsys and runs it to the end; a failed sink is
// closed, as the runtime closes a failed task's sink.
func (d *sinkDriver) attempt(fsys vfs.FS) error {
	s, err := d.open(fsys)
	if err == nil {
		err = d.runFrom(s)
	}
	if err != nil {
		s.Close()
	}
	return err
}

// scenario is a fresh run over every segment, then a restore of the first
// checkpoint (output committed after it is truncated away) and a run of the
// rest again, on fsys.
func (d *sinkDriver) scenario(fsys vfs.FS) error {
	if err := d.attempt(fsys); err != nil {
		return err
	}
	// Restoring an older checkpoint drops the newer ones.
	d.last, d.completed = d.completed[0], d.completed[:1]
	return d.attempt(fsys)
}

// faultSegments is the input: one segment larger than the sink's write
// buffer, so its lines reach the staging file in several writes and its
// commit copies in several reads.
func faultSegments() [][]line {
	sizes := []int{3, 6000, 1, 40}
	segs := make([][]line, len(sizes))
	n := 0
	for i, size := range sizes {
		for range size {
			segs[i] = append(segs[i], line{n})
			n++
		}
	}
	return segs
}

func wantFaultOutput(segs [][]line) string {
	var b strings.Builder
	for _, seg := range segs {
		for _, l := range seg {
			b.WriteString(`{"n":` + strconv.Itoa(l.N) + "}\n")
		}
	}
	return b.String()
}

// cleanRunCalls runs the scenario without faults, checks its output and
// returns how many file-system calls it makes.
func cleanRunCalls(t *testing.T, segs [][]line) int {
	t.Helper()
	path := filepath.Join(t.TempDir(), "out.jsonl")
	ffs := faultfs.New(faultfs.NoSync(vfs.OS{}))
	if err := newSinkDriver(path, segs).scenario(ffs); err != nil {
		t.Fatalf("run without faults: %v", err)
	}
	if got := readOut(t, path); got != wantFaultOutput(segs) {
		t.Fatalf("run without faults: output of %d bytes differs from the input", len(got))
	}
	return ffs.Calls()
}

// checkFinished checks that the output is the input exactly once and that
// no sealed checkpoint or journal is left in the staging directory (only
// the lock, the fence and the last instance's empty staging file).
func checkFinished(t *testing.T, where, path string, segs [][]line) {
	t.Helper()
	if got, want := readOut(t, path), wantFaultOutput(segs); got != want {
		t.Fatalf("%s: the output (%d bytes, %d lines) differs from a run without faults (%d bytes, %d lines)",
			where, len(got), strings.Count(got, "\n"), len(want), strings.Count(want, "\n"))
	}
	entries, err := os.ReadDir(StagingDir(path))
	if err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	for _, e := range entries {
		if name := e.Name(); name != lockName && name != fenceName && !strings.HasPrefix(name, stagingPref) {
			t.Fatalf("%s: %s left in the staging directory", where, e.Name())
		}
	}
}

// TestFileSinkCrashAfterEachCall: the process dies after each file-system
// call of the sink's two-phase commit in turn (write, seal, journal, append,
// restore truncation); restarted from the last completed checkpoint and run
// to the end, the output is the same as a run without a crash.
func TestFileSinkCrashAfterEachCall(t *testing.T) {
	segs := faultSegments()
	total := cleanRunCalls(t, segs)
	for n := 0; n < total; n++ {
		path := filepath.Join(t.TempDir(), "out.jsonl")
		d := newSinkDriver(path, segs)
		ffs := faultfs.New(faultfs.NoSync(vfs.OS{}))
		ffs.CrashAfter(n)
		err := d.scenario(ffs)
		if err == nil {
			t.Fatalf("crash after call %d of %d: the run reported no error", n, total)
		}
		if !errors.Is(err, faultfs.ErrCrashed) {
			t.Fatalf("crash after call %d: error %v does not carry the crash", n, err)
		}
		crashedAt := ffs.Ops()[n]
		if err := d.attempt(faultfs.NoSync(vfs.OS{})); err != nil {
			t.Fatalf("crash after call %d (next: %s): restart from checkpoint %d: %v", n, crashedAt, d.last.id, err)
		}
		checkFinished(t, "crash before "+crashedAt, path, segs)
	}
	t.Logf("crashed after each of %d file-system calls", total)
}

// TestFileSinkDiskFullAtEachCall: each file-system call in turn fails with
// ENOSPC (a write writes half its buffer first). The sink reports an error
// that names the file and wraps ENOSPC; restarted from the last completed
// checkpoint once there is space, it loses nothing.
func TestFileSinkDiskFullAtEachCall(t *testing.T) {
	segs := faultSegments()
	total := cleanRunCalls(t, segs)
	failed, ignored := 0, map[string]int{}
	for n := 1; n <= total; n++ {
		path := filepath.Join(t.TempDir(), "out.jsonl")
		d := newSinkDriver(path, segs)
		ffs := faultfs.New(faultfs.NoSync(vfs.OS{}))
		ffs.FailCall(n, syscall.ENOSPC)
		err := d.scenario(ffs)
		call := ffs.Ops()[n-1]
		if err != nil {
			failed++
			if !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), "file sink "+path) {
				t.Fatalf("ENOSPC at call %d (%s): error %q, want one naming the sink's file and wrapping ENOSPC", n, call, err)
			}
			if err := d.attempt(faultfs.NoSync(vfs.OS{})); err != nil {
				t.Fatalf("ENOSPC at call %d (%s): restart from checkpoint %d: %v", n, call, d.last.id, err)
			}
		} else {
			ignored[strings.Fields(call)[0]+" "+filepath.Base(strings.Fields(call)[1])]++
		}
		checkFinished(t, "ENOSPC at "+call, path, segs)
	}
	t.Logf("%d file-system calls, %d of them failing with ENOSPC made the sink fail; the others (their failure changes nothing): %v", total, failed, ignored)
}
