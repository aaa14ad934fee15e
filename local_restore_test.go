package weir_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/actors"
	"github.com/weirstream/weir/internal/logbuf"
	"github.com/weirstream/weir/samples/keycount"
	"github.com/weirstream/weir/store"
)

// runKeycountOn runs keycount on a fresh actor node with st as its
// checkpoint store, restoring checkpoint restore ("" for none), and returns
// the job once it ended.
func runKeycountOn(t *testing.T, st store.Store, mode weir.CheckpointMode, out, restore string, log zerolog.Logger, n int64, k int) *actors.Job {
	t.Helper()
	cfg := weir.RunConfig{Restore: restore, Logger: log, Checkpoint: weir.CheckpointConfig{
		Mode: mode, Interval: 20 * time.Millisecond, Retain: 1000}}
	return runKeycountToEnd(t, cfg, st, log, out, n, k, func(rt *actors.Options) { rt.BatchSize, rt.ChannelCapacity = 64, 4 })
}

// TestRestoreReadsLocalSectionsAndOnlyTheDamagedOneRemotely: keycount
// checkpoints through a Mirror (a checkpoint store plus this node's local
// copy); a rerun restores a checkpoint taken mid-run after one byte of one
// key group's local section was flipped. Every section but that one is read
// locally, key groups and (unaligned) channel state alike; the damaged one
// is logged and read from the checkpoint store; the output is exactly once.
func TestRestoreReadsLocalSectionsAndOnlyTheDamagedOneRemotely(t *testing.T) {
	const n, k = 40000, 64
	for _, mode := range []weir.CheckpointMode{weir.CheckpointAligned, weir.CheckpointUnaligned} {
		t.Run(string(mode), func(t *testing.T) {
			dir := t.TempDir()
			out := filepath.Join(dir, "out.jsonl")
			primary, err := store.NewLocal(filepath.Join(dir, "primary"))
			if err != nil {
				t.Fatal(err)
			}
			local, err := store.NewLocal(filepath.Join(dir, "workdir", "state"))
			if err != nil {
				t.Fatal(err)
			}
			logs := &logbuf.Buffer{}
			log := zerolog.New(logs).Level(zerolog.InfoLevel)
			mirror := &store.Mirror{Primary: primary, Local: local, Log: log.With().Str("node", "n1").Logger()}
			defer mirror.Close()
			runKeycountOn(t, mirror, mode, out, "", log, n, k)
			if err := keycount.VerifyFile(out, n, k); err != nil {
				t.Fatalf("first run: %v", err)
			}

			// A checkpoint before the last, with channel state in unaligned mode.
			ctx := context.Background()
			ids, err := primary.List(ctx, "keycount")
			if err != nil {
				t.Fatal(err)
			}
			var m *store.Manifest
			for _, id := range ids[:len(ids)-1] {
				c, err := primary.Manifest(ctx, "keycount", id)
				if err != nil {
					t.Fatal(err)
				}
				if mode == weir.CheckpointAligned || channelSections(c) > 0 {
					m = c
				}
				if m != nil && id >= ids[len(ids)/2] {
					break
				}
			}
			if m == nil {
				t.Fatalf("no checkpoint before the last of %v has channel state", ids)
			}
			total, victim, group := 0, store.BlobRef{}, -1
			for _, ts := range m.Tasks {
				total += len(ts.KeyGroups) + len(ts.Channels)
				if ts.OperatorState != nil {
					total++
				}
				for g, ref := range ts.KeyGroups {
					if ts.Operator == "count" && (group < 0 || g < group) {
						victim, group = ref, g
					}
				}
			}
			p := filepath.Join(local.Dir(), "keycount", checkpointDirName(m.CheckpointID), filepath.FromSlash(victim.Name))
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			data[victim.Offset] ^= 0x20
			if err := os.WriteFile(p, data, 0o644); err != nil {
				t.Fatal(err)
			}

			job := runKeycountOn(t, mirror, mode, out, itoa(m.CheckpointID), log, n, k)
			if err := keycount.VerifyFile(out, n, k); err != nil {
				t.Fatalf("restored run: %v", err)
			}
			rs := job.Restores()
			if rs.Read.RemoteSections != 1 || rs.Read.RemoteBytes != victim.Size || rs.Read.LocalSections != total-1 {
				t.Fatalf("checkpoint %d (%d sections, %d channel): restore read %+v, want 1 section of %d bytes remote and %d local",
					m.CheckpointID, total, channelSections(m), rs.Read, victim.Size, total-1)
			}
			t.Logf("checkpoint %d: %d sections (%d channel state), restore read %+v", m.CheckpointID, total, channelSections(m), rs.Read)
			damaged := logs.Lines("local section damaged", `"node":"n1"`, `"job":"keycount"`,
				`"operator":"count"`, `"key_group":`+itoa(uint64(group)), `"checkpoint":`+itoa(m.CheckpointID))
			if len(damaged) != 1 {
				t.Fatalf("%d log lines for the damaged section, want 1", len(damaged))
			}
			restored := logs.Lines(`"message":"restored from checkpoint"`, `"remote_sections":1`, `"remote_bytes":`+itoa(uint64(victim.Size)))
			if len(restored) != 1 {
				t.Fatalf("%d restore log lines with the remote section, want 1", len(restored))
			}
		})
	}
}

func channelSections(m *store.Manifest) int {
	n := 0
	for _, ts := range m.Tasks {
		n += len(ts.Channels)
	}
	return n
}

func checkpointDirName(id uint64) string { return "chk-" + leftPad(itoa(id), 20) }

func leftPad(s string, w int) string { return strings.Repeat("0", max(0, w-len(s))) + s }

func itoa(v uint64) string { return strconv.FormatUint(v, 10) }
