package keycount

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weirstream/weir"
)

// handOffAcrossCheckpoint: removed instance 2 seals its records as of
// checkpoint 5 and hands them off with what it wrote since; instance 0,
// which has not reached checkpoint 5 yet, takes them over and seals them
// at its own checkpoint 5, then commits 5.
func handOffAcrossCheckpoint(t *testing.T, newSink func(int) weir.Sink[Count]) {
	t.Helper()
	removed, kept := newSink(2).(weir.HandOffSink[Count]), newSink(0).(weir.HandOffSink[Count])
	for i, s := range []weir.HandOffSink[Count]{kept, removed} {
		if err := s.Open(weir.TaskInfo{Instance: []int{0, 2}[i], Parallelism: 3}); err != nil {
			t.Fatal(err)
		}
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(removed.Write([]Count{{"a", 1}, {"a", 2}}))
	_, err := removed.PrepareCommit(5)
	must(err)
	must(removed.Write([]Count{{"a", 3}}))
	state, err := removed.HandOff()
	must(err)
	must(kept.Write([]Count{{"b", 1}}))
	must(kept.TakeOver(state))
	_, err = kept.PrepareCommit(5)
	must(err)
	must(kept.Commit(5))
}

// TestStagingSinkHandOffAcrossCheckpoint: what a removed instance sealed
// at checkpoint 5 and what it wrote after, sealed by its successor at the
// successor's checkpoint 5, are two transactions: both are committed.
// (Named by writer and checkpoint alone, the second was taken for the
// first and dropped.)
func TestStagingSinkHandOffAcrossCheckpoint(t *testing.T) {
	l := NewCommitLog()
	handOffAcrossCheckpoint(t, l.Sink())
	l.mu.Lock()
	total := l.total
	l.mu.Unlock()
	if total != 4 {
		t.Fatalf("%d records committed, want 4 (a 1..3, b 1)", total)
	}

	d := StagingDir{Dir: t.TempDir()}
	handOffAcrossCheckpoint(t, d.Sink())
	sum, err := VerifyStagingDir(d.Dir)
	if err != nil || sum.Records != 4 || sum.Keys != 2 || sum.TakenOver != 2 {
		t.Fatalf("staging directory: %+v, %v; want 4 records of 2 keys, 2 transactions taken over", sum, err)
	}
}

// TestStagingDirCommitsOnce: a transaction committed again (by a
// recovery) writes nothing; VerifyStagingDir names a count committed
// twice or missing.
func TestStagingDirCommitsOnce(t *testing.T) {
	d := StagingDir{Dir: t.TempDir()}
	b := []sealedBatch{{Writer: 7, Instance: 1, ID: 3, Sealer: 7, Records: []Count{{"a", 1}, {"a", 2}}}}
	for range 2 {
		if err := d.commit(1, 3, b); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.commit(1, 2, []sealedBatch{{Writer: 7, ID: 3, Sealer: 7, Records: []Count{{"a", 9}}}}); err != nil {
		t.Fatal(err) // checkpoint 3 is after 2: not committed
	}
	names, _ := filepath.Glob(filepath.Join(d.Dir, "*"))
	if len(names) != 1 {
		t.Fatalf("files %v, want one transaction", names)
	}
	if sum, err := VerifyStagingDir(d.Dir); err != nil || sum.Records != 2 {
		t.Fatalf("%+v, %v", sum, err)
	}
	if err := d.commit(1, 4, []sealedBatch{{Writer: 8, ID: 4, Sealer: 8, Records: []Count{{"a", 2}, {"a", 4}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := VerifyStagingDir(d.Dir); err == nil || !strings.Contains(err.Error(), "a count 2 committed 2 times") {
		t.Fatalf("a count committed twice: %v", err)
	}
	d2 := StagingDir{Dir: t.TempDir()}
	if err := d2.commit(0, 1, []sealedBatch{{Writer: 1, ID: 1, Sealer: 1, Records: []Count{{"a", 1}, {"a", 3}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := VerifyStagingDir(d2.Dir); err == nil || !strings.Contains(err.Error(), "a count 2 committed 0 times") {
		t.Fatalf("a count missing: %v", err)
	}
	if err := (StagingDir{Dir: d.Dir, Hold: "nowhere"}).Check(); err == nil {
		t.Fatal("an unknown hold point passes Check")
	}
	if err := (StagingDir{Dir: filepath.Join(d.Dir, "none")}).Check(); err == nil {
		t.Fatal("a missing directory passes Check")
	}
	if _, err := os.Stat(d.HoldFile()); err == nil {
		t.Fatal("hold file exists")
	}
}
