package state

import (
	"bytes"
	"fmt"
)

// StagedGroups is the state of key groups decoded without changing the
// backend; Commit installs it. It lets the decoding of key groups handed
// over by a live rescale run on another goroutine while the task goes on
// with its other groups.
type StagedGroups struct {
	b      *Backend
	groups []stagedGroup
}

// stagedGroup is one key group's decoded tables.
type stagedGroup struct {
	g       int
	present []bool    // by table index: the blob has the table
	commits []func()  // tables of this package, decoded
	others  []tableIn // tables implemented elsewhere, restored at commit
}

// tableIn is a table implemented elsewhere and its part of a blob.
type tableIn struct {
	t    Table
	data []byte
}

// StageGroups decodes blobs (key group → blob, as SnapshotGroup gives)
// without changing the backend: it reads only what the backend fixed at
// registration, so it may run on any goroutine while the backend's owner
// goes on changing other key groups. The blobs are not kept. Commit
// installs the result; a bad blob is an error here and the backend stays
// as it was.
func (b *Backend) StageGroups(blobs map[int][]byte) (*StagedGroups, error) {
	s := &StagedGroups{b: b}
	for g, blob := range blobs {
		sg, err := b.stageGroup(g, blob)
		if err != nil {
			return nil, err
		}
		s.groups = append(s.groups, sg)
	}
	return s, nil
}

// stageGroup decodes one key group's blob; see restoreGroup for the checks.
func (b *Backend) stageGroup(g int, blob []byte) (stagedGroup, error) {
	sg := stagedGroup{g: g, present: make([]bool, len(b.tables))}
	if err := b.checkGroup("restore", g); err != nil {
		return sg, err
	}
	h, entries, err := decodeBlob(blob, blobCRC{})
	if err != nil {
		return sg, fmt.Errorf("state: restore key group %d: %w", g, err)
	}
	if h.group != g {
		return sg, fmt.Errorf("state: restore key group %d: blob holds key group %d: %w", g, h.group, ErrMismatch)
	}
	if h.maxParallelism != b.maxParallelism {
		return sg, fmt.Errorf("state: restore key group %d: blob has maxParallelism %d, backend %d: %w",
			g, h.maxParallelism, b.maxParallelism, ErrMismatch)
	}
	for _, en := range entries {
		i, ok := b.byName[en.name]
		if !ok {
			return sg, fmt.Errorf("state: restore key group %d table %q: %w", g, en.name, ErrUnknownTable)
		}
		t := b.tables[i]
		if t.Kind() != en.kind {
			return sg, fmt.Errorf("state: restore key group %d table %q: blob holds a %s table, registered is a %s table: %w",
				g, en.name, en.kind, t.Kind(), ErrMismatch)
		}
		sg.present[i] = true
		s, ok := t.(stager)
		if !ok {
			sg.others = append(sg.others, tableIn{t: t, data: bytes.Clone(en.data)})
			continue
		}
		commit, err := s.stageGroup(g, en.data)
		if err != nil {
			return sg, err // names table and group already
		}
		sg.commits = append(sg.commits, commit)
	}
	return sg, nil
}

// Groups returns the staged key groups, in no particular order.
func (s *StagedGroups) Groups() []int {
	gs := make([]int, len(s.groups))
	for i, sg := range s.groups {
		gs[i] = sg.g
	}
	return gs
}

// Commit installs the staged groups, as RestoreGroup would have, on the
// backend owner's goroutine. Only a table implemented elsewhere can fail
// here; it is restored in place and may be left changed.
func (s *StagedGroups) Commit() error {
	for _, sg := range s.groups {
		for _, o := range sg.others {
			if err := o.t.RestoreGroup(sg.g, o.data); err != nil {
				return fmt.Errorf("state: restore key group %d table %q: %w", sg.g, o.t.Name(), err)
			}
		}
		for _, commit := range sg.commits {
			commit()
		}
		for i, t := range s.b.tables {
			if !sg.present[i] {
				t.DropGroup(sg.g)
			}
		}
	}
	return nil
}
