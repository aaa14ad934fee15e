package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weirstream/weir/samples/bigstate"
)

// TestRestartedNodeRestoresIntoMemoryFaultedInAtStart: a one-node cluster
// runs bigstate with several megabytes of state, every checkpoint written
// whole (key groups stored incrementally are restored through one reused
// buffer and not counted for this memory); the node is SIGKILLed and
// started again with the same id and workdir. At start it faults in memory
// for the state its local copy holds, and its keyed task's restore reads
// its sections into that memory (the node logs it given back as used, with
// less than a shared buffer's worth left), all of them locally; the output
// is exactly once with every value's checksum right.
func TestRestartedNodeRestoresIntoMemoryFaultedInAtStart(t *testing.T) {
	t.Parallel()
	bin := buildNode(t)
	c, args := startOneEmbedded(t, bin)
	out := filepath.Join(c.dir, "out.jsonl")
	// 40,000 keys × 512 B: about 21 MB of key groups once filled, read
	// in parts of more than the 4 MiB a restore shares one buffer for.
	const n, k, valueBytes = 400000, 40000, 512
	_, sout, done := c.submitAttached("bigstate", "--records", fmt.Sprint(n), "--keys", fmt.Sprint(k), "--value-bytes", fmt.Sprint(valueBytes),
		"--out", out, "--sleep-ms", "0.05", "--checkpoint-interval", "200ms", "--checkpoint-incremental=false")
	c.waitCheckpoint("bigstate", 3, "")
	c.kill("n1")
	again := c.startNode("n1", args)
	if err := waitSubmit(t, done, sout); err != nil {
		t.Fatalf("node submit after n1 restarted: %v\n%s", err, sout.String())
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := bigstate.Verify(f, n, k, valueBytes); err != nil {
		t.Fatalf("output after the restart: %v", err)
	}

	log := again.stderr.String()
	var faulting struct {
		Bytes  int64  `json:"bytes"`
		Reason string `json:"reason"`
	}
	lines := strings.Split(strings.TrimSpace(linesWith(log, `"message":"faulting memory in for restoring the local state this node holds"`)), "\n")
	if len(lines) != 1 || json.Unmarshal([]byte(lines[0]), &faulting) != nil || faulting.Reason != "start" || faulting.Bytes < 4<<20 {
		t.Fatalf("want one fault-in at start of at least 4 MiB; got %+v from:\n%s", faulting, strings.Join(lines, "\n"))
	}
	if used := linesWith(log, `"message":"memory for restoring local state given back"`); !strings.Contains(used, `"reason":"used"`) {
		t.Fatalf("the memory faulted in was not used by a restore; given back:\n%s\nrestores:\n%s", used,
			linesWith(log, `"message":"restored from checkpoint"`))
	}
	var local, remote int64
	for _, r := range restoreLines(t, log) {
		local, remote = local+r.LocalBytes, remote+r.RemoteBytes
	}
	if local < 4<<20 || remote != 0 {
		t.Fatalf("restores read %d bytes locally and %d remotely: want all of the state locally", local, remote)
	}
	t.Logf("faulted in %d bytes at start; restores read %d bytes locally", faulting.Bytes, local)
}
