package weir_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/actors"
	"github.com/weirstream/weir/samples/keycount"
	"github.com/weirstream/weir/store"
)

// TestIncrementalRestoreOlderCheckpointAtNewParallelism runs keycount with
// incremental checkpoints and --retain 3 until retention has subsumed
// checkpoints whose blobs retained ones still read, stops it, and restores
// the older of the retained checkpoints whose key-group chains read a
// subsumed checkpoint's sections, at another parallelism: the output must
// be exactly once.
func TestIncrementalRestoreOlderCheckpointAtNewParallelism(t *testing.T) {
	t.Parallel()
	run := runIncrementalKeycount(t)
	run.requireOlder(t)
	t.Logf("retained %v; restoring %d at parallelism 3", run.listed, run.older)
	res, err := weir.Run(context.Background(), run.build(3), weir.WithCheckpoints(run.cc), weir.WithRestore(fmt.Sprint(run.older)))
	if err != nil {
		t.Fatalf("restore %d: %v", run.older, err)
	}
	if res.RestoredFrom != run.older {
		t.Fatalf("restored from %d, want %d", res.RestoredFrom, run.older)
	}
	verifyKeycount(t, run.out, incrN, incrK)
}

// TestIncrementalRestoreCorruptReferencedSection flips a byte of a section
// that a retained checkpoint's chain reads from a subsumed checkpoint's
// blob: the restore fails naming the checkpoint, the operator, the key group
// and the checkpoint that wrote the section.
func TestIncrementalRestoreCorruptReferencedSection(t *testing.T) {
	t.Parallel()
	run := runIncrementalKeycount(t)
	run.requireOlder(t)
	m := run.manifest(t, run.older)
	var g int
	var link store.ChainLink
	for _, ts := range m.Tasks {
		for kg, chain := range ts.KeyGroupChains {
			if l := chain[0]; !slices.Contains(run.listed, l.Checkpoint) {
				g, link = kg, l
			}
		}
	}
	if link.Checkpoint == 0 {
		t.Fatalf("checkpoint %d reads no section of a subsumed checkpoint", run.older)
	}
	path := filepath.Join(run.stateDir, "keycount", fmt.Sprintf("chk-%020d", link.Checkpoint), filepath.FromSlash(link.Ref.Name))
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data[link.Ref.Offset+link.Ref.Size/2] ^= 0x20
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	sup := weir.DefaultSupervision()
	sup.MaxRestarts = 0
	_, err = weir.Run(context.Background(), run.build(2), weir.WithCheckpoints(run.cc), weir.WithRestore(fmt.Sprint(run.older)), weir.WithSupervision(sup))
	if err == nil {
		t.Fatal("a restore reading a corrupt section succeeded")
	}
	for _, want := range []string{fmt.Sprintf("restore checkpoint %d", run.older), "operator count", fmt.Sprintf("key group %d", g),
		fmt.Sprintf("written by checkpoint %d", link.Checkpoint), "corrupt"} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("error %q does not say %q", err, want)
		}
	}
}

const incrN, incrK = 40000, 40000

// incrementalRun is a stopped keycount run with incremental checkpoints.
type incrementalRun struct {
	stoppedRun
	older     uint64 // a retained one, not the newest, that reads a subsumed checkpoint's sections; 0 if none
	stats     []actors.CheckpointStat
	taskState map[string]int64 // each task's state bytes in the newest checkpoint
}

// requireOlder fails the test when no retained checkpoint but the newest
// reads a subsumed checkpoint's sections.
func (r incrementalRun) requireOlder(t *testing.T) {
	t.Helper()
	if r.older == 0 {
		t.Fatalf("no retained checkpoint but the newest of %v reads a subsumed checkpoint's sections", r.listed)
	}
}

// runIncrementalKeycount runs keycount with incremental checkpoints and
// --retain 3 until ten checkpoints completed, so that retention has
// (usually) subsumed checkpoints whose blobs retained ones still read, and
// stops it.
func runIncrementalKeycount(t *testing.T) incrementalRun {
	t.Helper()
	run := runKeycountUntil(t, keycount.Config{Records: incrN, Keys: incrK, SleepMs: 0.2},
		weir.CheckpointConfig{Mode: weir.CheckpointUnaligned, Interval: 20 * time.Millisecond, Retain: 3, FullCheckpoints: false}, 10) // incremental: the default
	r := incrementalRun{stoppedRun: run, stats: run.job.Checkpoints(), taskState: run.job.TaskStateBytes()}
	for _, id := range run.listed[:len(run.listed)-1] {
		for _, c := range store.ReferencedCheckpoints(run.manifest(t, id)) {
			if !slices.Contains(run.listed, c) {
				r.older = id
			}
		}
	}
	return r
}
