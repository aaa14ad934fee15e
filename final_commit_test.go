package weir_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir"
)

// failingCommitSink is a two-phase sink whose commits fail, as on a full disk.
type failingCommitSink struct{}

func (failingCommitSink) Open(weir.TaskInfo) error             { return nil }
func (failingCommitSink) Write([]int64) error                  { return nil }
func (failingCommitSink) Finish() error                        { return nil }
func (failingCommitSink) Close() error                         { return nil }
func (failingCommitSink) PrepareCommit(uint64) ([]byte, error) { return nil, nil }
func (failingCommitSink) Recover(uint64, []byte) error         { return nil }
func (failingCommitSink) Commit(id uint64) error               { return errDiskFull }

var errDiskFull = errors.New("no space left on device")

// TestFinalCommitFailureFailsTheRun: the only checkpoint is the final one and
// the sink cannot commit it. The run must fail, naming the sink and the cause;
// before, the job ended as soon as the final checkpoint completed and a
// failure after it was reported as success.
func TestFinalCommitFailureFailsTheRun(t *testing.T) {
	g := weir.NewGraph("commitfail")
	nums := weir.Generate(g, "source", 1000, func(i int64) int64 { return i })
	weir.ToSink(nums, "sink", func(int) weir.Sink[int64] { return failingCommitSink{} })
	res, err := weir.Run(context.Background(), g, weir.WithCheckpoints(weir.CheckpointConfig{
		Mode: weir.CheckpointUnaligned, Interval: time.Hour, StateDir: filepath.Join(t.TempDir(), "state")}))
	if err == nil {
		t.Fatalf("run succeeded (%d checkpoints) although the sink could not commit", len(res.Checkpoints))
	}
	if !errors.Is(err, errDiskFull) || !strings.Contains(err.Error(), "sink[0]") || !strings.Contains(err.Error(), "commit") {
		t.Fatalf("error %q does not name the sink, the commit and the cause", err)
	}
}
