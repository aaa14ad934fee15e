package weir

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

type line struct {
	N int `json:"n"`
}

func openSink(t *testing.T, path string, restoring bool) *fileSink[line] {
	t.Helper()
	s := FileSink[line](path)(0).(*fileSink[line])
	if err := s.Open(TaskInfo{Operator: "sink", Parallelism: 1, Checkpointing: true, Restoring: restoring}); err != nil {
		t.Fatal(err)
	}
	return s
}

func readOut(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestFileSinkCommitIsAtomicAcrossCrash simulates a process killed in the middle
// of appending a checkpoint's lines: the next start finishes the commit from the
// journal, so the output holds every line exactly once.
func TestFileSinkCommitIsAtomicAcrossCrash(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.jsonl")
	s := openSink(t, path, false)
	if err := s.Write([]line{{1}, {2}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PrepareCommit(1); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(1); err != nil {
		t.Fatal(err)
	}
	if err := s.Write([]line{{3}, {4}, {5}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PrepareCommit(2); err != nil {
		t.Fatal(err)
	}
	// Crash during checkpoint 2's commit: journal written, half the lines appended.
	size, _ := s.size(path)
	if err := s.writeJournal(2, size); err != nil {
		t.Fatal(err)
	}
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString(`{"n":3}` + "\n" + `{"n":`)
	f.Close()
	// Lines written after checkpoint 2 were never sealed.
	s.Write([]line{{6}})
	s.lw.flush()
	s.f.Close()

	s2 := openSink(t, path, true)
	defer s2.Close()
	if err := s2.Recover(2, nil); err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{`{"n":1}`, `{"n":2}`, `{"n":3}`, `{"n":4}`, `{"n":5}`}, "\n") + "\n"
	if got := readOut(t, path); got != want {
		t.Fatalf("output after recovery:\n%s\nwant:\n%s", got, want)
	}
	// Committing again is idempotent.
	if err := s2.Commit(2); err != nil {
		t.Fatal(err)
	}
	if got := readOut(t, path); got != want {
		t.Fatalf("second commit changed the output:\n%s", got)
	}
}

// TestFileSinkRecoverDropsLaterCheckpoints: output sealed for a checkpoint that
// never completed is discarded by recovering an earlier one.
func TestFileSinkRecoverDropsLaterCheckpoints(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.jsonl")
	s := openSink(t, path, false)
	s.Write([]line{{1}})
	s.PrepareCommit(1)
	s.Write([]line{{2}})
	s.PrepareCommit(2) // checkpoint 2 never completes
	s.Close()
	s2 := openSink(t, path, true)
	defer s2.Close()
	if err := s2.Recover(1, nil); err != nil {
		t.Fatal(err)
	}
	if got := readOut(t, path); got != `{"n":1}`+"\n" {
		t.Fatalf("output %q, want only checkpoint 1's line", got)
	}
	if ids, _ := s2.pending(); len(ids) != 0 {
		t.Fatalf("pending after recovery: %v", ids)
	}
}

// sealAndCommit writes ns, seals them as checkpoint id and, if commit, commits
// id; it returns the checkpoint's state.
func sealAndCommit(t *testing.T, s *fileSink[line], id uint64, commit bool, ns ...int) []byte {
	t.Helper()
	for _, n := range ns {
		if err := s.Write([]line{{n}}); err != nil {
			t.Fatal(err)
		}
	}
	st, err := s.PrepareCommit(id)
	if err != nil {
		t.Fatal(err)
	}
	if commit {
		if err := s.Commit(id); err != nil {
			t.Fatal(err)
		}
	}
	return st
}

func lines(ns ...int) string {
	var b strings.Builder
	for _, n := range ns {
		b.WriteString(`{"n":` + strconv.Itoa(n) + "}\n")
	}
	return b.String()
}

// TestFileSinkRestoreOlderCheckpointRollsBack restores a checkpoint older
// than the newest committed one: the output goes back to exactly what that
// checkpoint committed, whatever later checkpoints committed, aborted or
// left sealed, and the restored run appends after it.
func TestFileSinkRestoreOlderCheckpointRollsBack(t *testing.T) {
	for _, tc := range []struct {
		name    string
		restore int // index into the checkpoints below
		want    string
	}{
		{"first", 0, lines(1, 2)},
		{"after an aborted one", 2, lines(1, 2, 3, 4, 5)},
		{"newest committed", 3, lines(1, 2, 3, 4, 5, 6)},
		{"completed, not yet committed", 4, lines(1, 2, 3, 4, 5, 6, 7)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "out.jsonl")
			s := openSink(t, path, false)
			states := [][]byte{
				sealAndCommit(t, s, 1, true, 1, 2),
				sealAndCommit(t, s, 2, false, 3, 4), // aborted: committed with 3
				sealAndCommit(t, s, 3, true, 5),
				sealAndCommit(t, s, 4, true, 6),
				sealAndCommit(t, s, 5, false, 7), // completed, killed before its commit
				sealAndCommit(t, s, 6, false, 8), // never completed
			}
			s.Write([]line{{9}}) // never sealed
			s.Close()
			ids := []uint64{1, 2, 3, 4, 5, 6}

			s2 := openSink(t, path, true)
			defer s2.Close()
			if err := s2.Recover(ids[tc.restore], states[tc.restore]); err != nil {
				t.Fatal(err)
			}
			if got := readOut(t, path); got != tc.want {
				t.Fatalf("output after restoring checkpoint %d:\n%s\nwant:\n%s", ids[tc.restore], got, tc.want)
			}
			if p, _ := s2.pending(); len(p) != 0 {
				t.Fatalf("pending after recovery: %v", p)
			}
			// The restored run numbers its checkpoints after every earlier id.
			sealAndCommit(t, s2, 7, true, 100)
			if got := readOut(t, path); got != tc.want+lines(100) {
				t.Fatalf("output after the restored run's first commit:\n%s\nwant:\n%s", got, tc.want+lines(100))
			}
		})
	}
}

// TestFileSinkRestoreRefusesLostOutput: an output shorter than the restored
// checkpoint committed lost committed lines; recovery says so.
func TestFileSinkRestoreRefusesLostOutput(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.jsonl")
	s := openSink(t, path, false)
	st := sealAndCommit(t, s, 1, true, 1, 2, 3)
	s.Close()
	if err := os.Truncate(path, 5); err != nil {
		t.Fatal(err)
	}
	s2 := openSink(t, path, true)
	defer s2.Close()
	err := s2.Recover(1, st)
	if err == nil || !strings.Contains(err.Error(), "checkpoint 1 committed 24") || !strings.Contains(err.Error(), "has 5 bytes") {
		t.Fatalf("Recover over a truncated output: %v, want an error naming both sizes", err)
	}
	if err := s2.Recover(1, []byte{1, 2, 3}); err == nil || !strings.Contains(err.Error(), "state is 3 bytes") {
		t.Fatalf("Recover with a malformed state: %v", err)
	}
}

// TestFileSinkClosedAfterBeingReplacedWritesNothing: a sink of a replaced
// run (its coordinator paused past its lease, then resumed) is closed while
// the new run's sink on another node already stages its lines in the same
// staging file. Closing must not flush the replaced sink's buffered,
// never-sealed lines into that file: they belong to no checkpoint, and
// written at the old file offset they overwrite or repeat the new run's
// lines. Before, Close flushed them (seen as a torn line and as missing
// output in TestClusterPausedCoordinatorIsFenced).
func TestFileSinkClosedAfterBeingReplacedWritesNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.jsonl")
	old := openSink(t, path, false)
	st := sealAndCommit(t, old, 1, true, 1, 2)
	// Buffered after checkpoint 1, never sealed: the old run is replaced
	// (it had got further than the new run will have by its checkpoint 2).
	if err := old.Write([]line{{3}, {4}, {5}, {6}}); err != nil {
		t.Fatal(err)
	}

	// The new run restores checkpoint 1 and stages its own lines.
	cur := openSink(t, path, true)
	defer cur.Close()
	if err := cur.Recover(1, st); err != nil {
		t.Fatal(err)
	}
	if err := cur.Write([]line{{3}}); err != nil {
		t.Fatal(err)
	}
	if err := cur.lw.flush(); err != nil {
		t.Fatal(err)
	}
	// The replaced sink stops only now.
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}
	sealAndCommit(t, cur, 2, true, 4, 5)
	if got, want := readOut(t, path), lines(1, 2, 3, 4, 5); got != want {
		t.Fatalf("output:\n%s\nwant:\n%s", got, want)
	}
}
