package weir_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/samples/keycount"
)

// TestStatelessTasksStoreNoBlobs: an aligned checkpoint of keycount has state
// only in the count operator and the file sink (the size its output will have
// once the checkpoint is committed); the sources' offsets are in the manifest,
// so the sources must write no blob. Before, every task wrote and fsynced an
// empty one each checkpoint. A restore from such a checkpoint still completes
// the output exactly once.
func TestStatelessTasksStoreNoBlobs(t *testing.T) {
	const n, k = 20000, 10
	dir := t.TempDir()
	out, stateDir := filepath.Join(dir, "out.jsonl"), filepath.Join(dir, "state")
	g, err := keycount.Build(keycount.Config{Records: n, Keys: k, Parallelism: 2, Out: out})
	if err != nil {
		t.Fatal(err)
	}
	cc := weir.CheckpointConfig{Mode: weir.CheckpointAligned, Interval: time.Hour, Retain: 5, StateDir: stateDir}
	if _, err := weir.Run(context.Background(), g, weir.WithCheckpoints(cc)); err != nil {
		t.Fatal(err)
	}
	var blobs []string
	err = filepath.Walk(filepath.Join(stateDir, "keycount"), func(path string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() && info.Name() != "_manifest" {
			rel, _ := filepath.Rel(stateDir, path)
			blobs = append(blobs, rel)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(blobs) == 0 {
		t.Fatal("no blob stored at all: the count tasks' state is missing")
	}
	counts := 0
	for _, b := range blobs {
		sep := string(filepath.Separator)
		switch {
		case strings.Contains(b, sep+"count"+sep):
			counts++
		case strings.Contains(b, sep+"sink"+sep):
		default:
			t.Errorf("stateless task stored blob %s", b)
		}
	}
	if counts == 0 {
		t.Error("no blob of the count tasks: their state is missing")
	}
	// Restoring the final checkpoint (sources at their end) adds nothing.
	restoreLatest(t, g, weir.WithCheckpoints(cc))
	verifyKeycount(t, out, n, k)
}
