package keycount

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/weirstream/weir"
)

// Points where a StagingDir's sink instances can be held (StagingDir.Hold).
const (
	// HoldHandOff is the start of a removed instance's HandOff: what it
	// staged has not left it.
	HoldHandOff = "hand-off"
	// HoldTakenOverCommit is the start of a Commit that commits a
	// transaction another instance wrote and handed off to this one.
	HoldTakenOverCommit = "taken-over-commit"
)

// holdPoints are the points Hold may name.
var holdPoints = []string{HoldHandOff, HoldTakenOverCommit}

// holdGate is the file in Dir whose presence holds instances at Hold.
const holdGate = "hold"

// StagingDir is a commit log in a directory that the node processes
// running a job share: its staging sinks (StagingDir.Sink, as
// CommitLog.Sink's) commit each transaction as one file, written whole
// once (a transaction committed again, by the instance that took it over
// or by a recovery, finds its file and writes nothing).
type StagingDir struct {
	// Dir holds the committed transactions, one txn-*.json file each.
	Dir string
	// Hold, if not empty, names a point (HoldHandOff,
	// HoldTakenOverCommit) where an instance that reaches it while the
	// file Dir/hold exists writes Dir/held-POINT-INSTANCE and waits
	// until Dir/hold is removed: a test can kill a node there.
	Hold string
}

// Check reports whether d can be used: its directory exists and Hold is
// a known point.
func (d StagingDir) Check() error {
	if st, err := os.Stat(d.Dir); err != nil || !st.IsDir() {
		return fmt.Errorf("staging directory %q: not a directory (%v)", d.Dir, err)
	}
	if d.Hold != "" && !slices.Contains(holdPoints, d.Hold) {
		return fmt.Errorf("staging hold %q: want one of %s", d.Hold, strings.Join(holdPoints, ", "))
	}
	return nil
}

// Sink makes staging sinks that commit to d.
func (d StagingDir) Sink() func(int) weir.Sink[Count] {
	return func(int) weir.Sink[Count] {
		s := &stagingSink{log: d}
		if d.Hold != "" {
			s.hold = d.holdAt
		}
		return s
	}
}

// HoldFile is the file whose presence holds instances at d.Hold.
func (d StagingDir) HoldFile() string { return filepath.Join(d.Dir, holdGate) }

// HeldFile is the file an instance held at point writes.
func (d StagingDir) HeldFile(point string, instance int) string {
	return filepath.Join(d.Dir, fmt.Sprintf("held-%s-%d", point, instance))
}

// holdAt waits, if point is d.Hold, while the hold file exists.
func (d StagingDir) holdAt(point string, instance int) {
	if point != d.Hold {
		return
	}
	if _, err := os.Stat(d.HoldFile()); err != nil {
		return
	}
	_ = os.WriteFile(d.HeldFile(point, instance), nil, 0o644)
	for {
		if _, err := os.Stat(d.HoldFile()); errors.Is(err, fs.ErrNotExist) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// newWriter draws a writer id: writers of several processes share d.
func (d StagingDir) newWriter(int) int { return int(rand.Int64N(1 << 53)) }

// dirTxn is one committed transaction's file.
type dirTxn struct {
	sealedBatch
	By int `json:"by"` // the instance that committed it
}

// commit writes each transaction up to id among batches that has records
// and no file yet: to a temporary file, synced, then linked to its name
// (which fails if another commit of it got there first).
func (d StagingDir) commit(by int, id uint64, batches []sealedBatch) error {
	for _, b := range batches {
		if b.ID > id || len(b.Records) == 0 {
			continue
		}
		name := filepath.Join(d.Dir, fmt.Sprintf("txn-%d-%d-%d.json", b.Writer, b.ID, b.Sealer))
		if _, err := os.Stat(name); err == nil {
			continue
		}
		raw, err := json.Marshal(dirTxn{sealedBatch: b, By: by})
		if err != nil {
			return fmt.Errorf("transaction %d of writer %d sealed by %d: %w", b.ID, b.Writer, b.Sealer, err)
		}
		if err := linkNew(d.Dir, name, raw); err != nil {
			return fmt.Errorf("transaction %d of writer %d sealed by %d: %w", b.ID, b.Writer, b.Sealer, err)
		}
	}
	return nil
}

// linkNew makes name hold raw unless it exists.
func linkNew(dir, name string, raw []byte) error {
	f, err := os.CreateTemp(dir, ".tmp-txn-")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	if _, err := f.Write(raw); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Link(tmp, name); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return nil
}

// StagingSummary describes what a StagingDir holds.
type StagingSummary struct {
	Records      int // committed records
	Transactions int // committed transactions with records
	// TakenOver counts the transactions committed by an instance other
	// than the one that wrote them.
	TakenOver int
	Keys      int // keys with committed counts
}

// VerifyStagingDir checks that dir holds a prefix of one run committed
// exactly once: each key's counts 1, 2, … up to its highest, each once, in
// any order.
func VerifyStagingDir(dir string) (StagingSummary, error) {
	var sum StagingSummary
	names, err := filepath.Glob(filepath.Join(dir, "txn-*.json"))
	if err != nil {
		return sum, err
	}
	seen := map[string]map[int64]int{}
	for _, name := range names {
		raw, err := os.ReadFile(name)
		if err != nil {
			return sum, err
		}
		var tx dirTxn
		if err := json.Unmarshal(raw, &tx); err != nil {
			return sum, fmt.Errorf("%s: %w", filepath.Base(name), err)
		}
		sum.Transactions++
		if tx.By != tx.Instance {
			sum.TakenOver++
		}
		for _, c := range tx.Records {
			if seen[c.Key] == nil {
				seen[c.Key] = map[int64]int{}
			}
			seen[c.Key][c.Count]++
			sum.Records++
		}
	}
	sum.Keys = len(seen)
	for key, counts := range seen {
		top := int64(0)
		for c := range counts {
			top = max(top, c)
		}
		for c := int64(1); c <= top; c++ {
			if n := counts[c]; n != 1 {
				return sum, fmt.Errorf("staging directory: %s count %d committed %d times, want once (its highest is %d)", key, c, n, top)
			}
		}
	}
	return sum, nil
}
