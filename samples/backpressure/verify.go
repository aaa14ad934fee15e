package backpressure

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
)

// stages is how many map stages count a record's hops.
const stages = 3

// Verify checks backpressure output for exactly-once results: n lines, every
// id in [0, n) once, each record through all three map stages once (hops 3)
// with the payload its id was made with. Shuffles promise no order, so none
// is checked. It names the first line that is wrong.
func Verify(r io.Reader, n int64) error {
	seen := make([]bool, n)
	lines := int64(0)
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		var rec Record
		lines++
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			return fmt.Errorf("line %d: %v: %q", lines, err, sc.Text())
		}
		switch {
		case rec.ID < 0 || rec.ID >= n:
			return fmt.Errorf("line %d: id %d outside [0, %d)", lines, rec.ID, n)
		case seen[rec.ID]:
			return fmt.Errorf("line %d: id %d repeated", lines, rec.ID)
		case rec.Hops != stages:
			return fmt.Errorf("line %d: id %d passed %d map stages, want %d", lines, rec.ID, rec.Hops, stages)
		case rec.Payload != payloads[rec.ID%int64(len(payloads))]:
			return fmt.Errorf("line %d: id %d payload %q, want %q", lines, rec.ID, rec.Payload, payloads[rec.ID%int64(len(payloads))])
		}
		seen[rec.ID] = true
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read output: %w", err)
	}
	for id, ok := range seen {
		if !ok {
			return fmt.Errorf("%d lines, id %d missing", lines, id)
		}
	}
	return nil
}

// VerifyFile runs Verify on the output file at path.
func VerifyFile(path string, n int64) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("backpressure output: %w", err)
	}
	defer f.Close()
	return Verify(f, n)
}
