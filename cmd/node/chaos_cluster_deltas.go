package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
)

// checkpointWrites counts, in the nodes' JSON logs, the checkpoints the
// job's coordinators completed and those of them that wrote less state
// than their full size: incremental checkpoints that wrote deltas.
func (nn *nodeNet) checkpointWrites() (completed, deltas int) {
	for i := 1; i <= clusterSize; i++ {
		data, err := os.ReadFile(nn.logPath(nodeID(i)))
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(make([]byte, 64*1024), 1<<20)
		for sc.Scan() {
			if !bytes.Contains(sc.Bytes(), []byte(`"checkpoint completed"`)) {
				continue
			}
			var l struct {
				Message string `json:"message"`
				Full    int64  `json:"state_bytes"`
				Written int64  `json:"state_written_bytes"`
			}
			if json.Unmarshal(sc.Bytes(), &l) != nil || l.Message != "checkpoint completed" {
				continue
			}
			completed++
			if l.Written < l.Full {
				deltas++
			}
		}
	}
	return completed, deltas
}
