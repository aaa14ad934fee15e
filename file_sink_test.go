package weir

import (
	"os"
	"path/filepath"
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
	size, _ := fileSize(path)
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
