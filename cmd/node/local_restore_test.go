package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir/internal/poll"
)

// TestNodeRestartedWithItsWorkdirRestoresLocally: a one-node cluster runs
// keycount; the node is SIGKILLed and started again with the same id and
// workdir (and the same embedded NATS address, so the attached submit
// follows). Its tasks restore every section — key groups, and with
// unaligned checkpoints channel state — from its own disk: 0 bytes read
// from JetStream, counted from the tasks' "restored from checkpoint" log
// lines; the output is exactly once. Started again with
// --local-recovery=false, it reads every section from JetStream instead,
// still exactly once.
func TestNodeRestartedWithItsWorkdirRestoresLocally(t *testing.T) {
	t.Parallel()
	bin := buildNode(t)
	for _, tc := range []struct{ name, mode string }{{"unaligned", "unaligned"}, {"aligned", "aligned"}, {"damaged", "unaligned"}, {"local recovery off", "unaligned"}} {
		mode := tc.mode
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, args := startOneEmbedded(t, bin)
			out := filepath.Join(c.dir, "out.jsonl")
			const n, k = 300000, 100
			_, sout, done := c.submitAttached("keycount", "--records", fmt.Sprint(n), "--keys", fmt.Sprint(k),
				"--out", out, "--sleep-ms", "0.03", "--checkpoint-interval", "100ms", "--checkpoint-mode", mode)
			c.waitCheckpoint("keycount", 2, "")
			c.kill("n1")
			damaged := 0
			if tc.name == "damaged" {
				damaged = damageFirstSection(t, filepath.Join(c.dir, "n1", "state", "keycount"), "count/0/state")
			}
			if tc.name == "local recovery off" {
				args = append(args, "--local-recovery=false")
			}
			again := c.startNode("n1", args)
			if err := waitSubmit(t, done, sout); err != nil {
				t.Fatalf("node submit after n1 restarted: %v\n%s", err, sout.String())
			}
			verifyKeycount(t, out, n, k)
			restores := restoreLines(t, again.stderr.String())
			var local, remote, channel int64
			for _, r := range restores {
				local += r.LocalBytes
				remote += r.RemoteBytes
				if strings.HasPrefix(r.Task, "count") || strings.HasPrefix(r.Task, "sink") {
					channel += r.Channels
				}
			}
			if damaged > 0 {
				var remoteSections int64
				for _, r := range restores {
					remoteSections += r.RemoteSections
				}
				// The task's restore names the key group; (the coordinator's check of
				// the checkpoint before restoring it names the blob.)
				warn := 0
				for _, l := range strings.Split(again.stderr.String(), "\n") {
					if strings.Contains(l, `"message":"local section damaged: reading it from the checkpoint store"`) &&
						strings.Contains(l, `"operator":"count","key_group":`) {
						warn++
					}
				}
				if remoteSections != 1 || remote == 0 || warn != 1 {
					t.Fatalf("after damaging one section in %d checkpoints: %d sections (%d bytes) read remotely, %d warnings; want 1 of each; warnings:\n%s",
						damaged, remoteSections, remote, warn, linesWith(again.stderr.String(), `"level":"warn"`))
				}
				t.Logf("%d task restores: %d bytes local, %d bytes in 1 section remote", len(restores), local, remote)
				return
			}
			if tc.name == "local recovery off" {
				if len(restores) == 0 || local != 0 || remote == 0 {
					t.Fatalf("restart with --local-recovery=false restored %d tasks, %d bytes locally and %d remotely: want some tasks, all remote",
						len(restores), local, remote)
				}
				t.Logf("%d task restores with local recovery off: %d bytes local, %d remote", len(restores), local, remote)
				return
			}
			if len(restores) == 0 || local == 0 || remote != 0 {
				t.Fatalf("restart restored %d tasks, %d bytes locally and %d remotely: want some tasks, all local; stderr:\n%s",
					len(restores), local, remote, lastBytes(again.stderr.String(), 4000))
			}
			if mode == "unaligned" && channel == 0 {
				t.Logf("the restored checkpoint had no channel state")
			}
			t.Logf("%d task restores: %d bytes local, %d remote, %d channels with state", len(restores), local, remote, channel)
		})
	}
}

// startOneEmbedded starts a one-node cluster, n1 embedding NATS at a fixed
// address (so that clients follow it across restarts), and returns it and
// n1's arguments.
func startOneEmbedded(t *testing.T, bin string) (*testCluster, []string) {
	t.Helper()
	ports, err := freePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	c := &testCluster{t: t, bin: bin, dir: t.TempDir(), nodes: map[string]*testNode{}}
	t.Cleanup(c.stopAll)
	args := []string{"--embed-nats", fmt.Sprintf("127.0.0.1:%d", ports[0])}
	first := c.startNode("n1", args)
	if !poll.Until(clusterDeadline, 20*time.Millisecond, func() bool { c.url = embeddedURL(first.stderr.String()); return c.url != "" }) {
		t.Fatalf("n1 did not report its NATS URL; stderr:\n%s", first.stderr.String())
	}
	c.waitStatus("n1 in the status", func(s statusView) bool { return s.allSeeAll(1) })
	return c, args
}

// restoreLine is a task's "restored from checkpoint" log line.
type restoreLine struct {
	Task        string `json:"task"`
	Checkpoint  uint64 `json:"checkpoint"`
	Channels    int64  `json:"channels"`
	LocalBytes  int64  `json:"local_bytes"`
	RemoteBytes int64  `json:"remote_bytes"`
	// RemoteSections is how many sections came from the checkpoint store.
	RemoteSections int64 `json:"remote_sections"`
}

// damageFirstSection flips the first byte of blob in every checkpoint of
// the job's local copy in dir (the first key group the task stored: a
// task's blob starts with its key groups), so whichever checkpoint is
// restored has one damaged local section. It returns how many it damaged.
func damageFirstSection(t *testing.T, dir, blob string) int {
	t.Helper()
	chks, err := filepath.Glob(filepath.Join(dir, "chk-*", filepath.FromSlash(blob)))
	if err != nil || len(chks) == 0 {
		t.Fatalf("no %s in the local copy under %s: %v", blob, dir, err)
	}
	for _, p := range chks {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		data[0] ^= 0x01
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return len(chks)
}

// restoreLines parses the restore log lines of a node's stderr.
func restoreLines(t *testing.T, log string) []restoreLine {
	t.Helper()
	var out []restoreLine
	sc := bufio.NewScanner(strings.NewReader(log))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if !strings.Contains(sc.Text(), `"message":"restored from checkpoint"`) {
			continue
		}
		var r restoreLine
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("restore log line %q: %v", sc.Text(), err)
		}
		out = append(out, r)
	}
	return out
}

// linesWith returns the lines of log that contain part.
func linesWith(log, part string) string {
	var b strings.Builder
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, part) {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}
