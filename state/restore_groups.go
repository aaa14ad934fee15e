package state

import (
	"bytes"
	"fmt"
	"runtime"
	"sync"
)

// GroupBlob is one key group's blob for RestoreGroups, as SnapshotGroup
// made it.
type GroupBlob struct {
	Group int
	Blob  []byte
	// CRC is the CRC-32C of Blob as a whole, when CRCKnown: the caller (a
	// checkpoint store) verified Blob against it, as for
	// RestoreGroupChecked.
	CRC      uint32
	CRCKnown bool
}

// RestoreGroups restores several key groups as RestoreGroup does for each,
// decoding them in parallel (at most GOMAXPROCS at a time: the key groups of
// a backend are independent) and installing them, in the order given, on
// the caller's goroutine once every one has decoded. If a group fails to
// decode, none is installed and the error of the first such group in the
// order given is returned.
//
// With adopt the caller hands the blobs over: the restored keys and values
// point into them (no copy per key or value), so the caller must never
// change or reuse a blob afterwards; values stay writable in place, each
// in its own region of its blob. Without adopt the backend keeps nothing of
// the blobs.
func (b *Backend) RestoreGroups(blobs []GroupBlob, adopt bool) error {
	in := keepInput(adopt)
	commits := make([]func() error, len(blobs))
	errs := make([]error, len(blobs))
	stage := func(i int) {
		gb := blobs[i]
		commits[i], errs[i] = b.stageBlob(gb.Group, gb.Blob, blobCRC{known: gb.CRCKnown, sum: gb.CRC}, in)
	}
	workers := min(runtime.GOMAXPROCS(0), len(blobs))
	if workers <= 1 {
		for i := range blobs {
			stage(i)
		}
	} else {
		// Each worker takes the next blob not taken yet; all are done
		// before RestoreGroups returns.
		var next sync.Mutex
		taken := 0
		var wg sync.WaitGroup
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					next.Lock()
					i := taken
					taken++
					next.Unlock()
					if i >= len(blobs) {
						return
					}
					stage(i)
				}
			}()
		}
		wg.Wait()
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	for _, commit := range commits {
		if err := commit(); err != nil {
			return err
		}
	}
	return nil
}

// stageBlob checks and decodes the blob of key group g into every table of
// this package that it names, changing nothing; it reads the backend's
// registration only, so several groups stage at once. The returned commit,
// on the backend's goroutine, restores the tables implemented elsewhere
// (in place: they may fail), installs the staged ones and empties g in the
// tables the blob does not name.
func (b *Backend) stageBlob(g int, blob []byte, crc blobCRC, in keepInput) (func() error, error) {
	if err := b.checkGroup("restore", g); err != nil {
		return nil, err
	}
	h, entries, err := decodeBlob(blob, crc)
	if err != nil {
		return nil, fmt.Errorf("state: restore key group %d: %w", g, err)
	}
	if h.group != g {
		return nil, fmt.Errorf("state: restore key group %d: blob holds key group %d: %w", g, h.group, ErrMismatch)
	}
	if h.maxParallelism != b.maxParallelism {
		return nil, fmt.Errorf("state: restore key group %d: blob has maxParallelism %d, backend %d: %w",
			g, h.maxParallelism, b.maxParallelism, ErrMismatch)
	}
	if h.delta {
		return b.stageDelta(g, entries, in)
	}
	return b.stageEntries(g, entries, in)
}

// stageEntries stages the tables of a whole blob of group g, entries, as
// stageBlob does; the commit empties g in every table entries do not name.
func (b *Backend) stageEntries(g int, entries []blobEntry, in keepInput) (func() error, error) {
	present := make([]bool, len(b.tables))
	targets := make([]Table, len(entries))
	for j, en := range entries {
		i, t, err := b.target(g, en)
		if err != nil {
			return nil, err
		}
		present[i] = true
		targets[j] = t
	}
	commits := make([]func(), 0, len(entries))
	for j, en := range entries {
		if s, ok := targets[j].(stager); ok {
			commit, err := s.stageGroup(g, en.data, in)
			if err != nil {
				return nil, err // names table and group already
			}
			commits = append(commits, commit)
		}
	}
	return func() error {
		b.lazy.discard(g) // replaced as a whole: its encoding is not needed any more
		for j, en := range entries {
			if _, ok := targets[j].(stager); !ok {
				// A Table implemented elsewhere may keep what it is given,
				// and blob may be the caller's (a restore reuses its read
				// buffer).
				if err := targets[j].RestoreGroup(g, bytes.Clone(en.data)); err != nil {
					return fmt.Errorf("state: restore key group %d table %q: %w", g, en.name, err)
				}
			}
		}
		for _, commit := range commits {
			commit()
		}
		for i, t := range b.tables {
			if !present[i] {
				t.DropGroup(g)
			}
		}
		b.markWhole(g)
		return nil
	}, nil
}
