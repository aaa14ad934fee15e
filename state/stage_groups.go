package state

// StagedGroups is the state of key groups decoded without changing the
// backend; Commit installs it. It lets the decoding of key groups handed
// over by a live rescale run on another goroutine while the task goes on
// with its other groups.
type StagedGroups struct {
	groups  []int
	commits []func() error
}

// StageGroups decodes blobs (key group → blob, as SnapshotGroup gives)
// without changing the backend: it reads only what the backend fixed at
// registration, so it may run on any goroutine while the backend's owner
// goes on changing other key groups. The backend keeps nothing of the
// blobs, but the caller must not change them before Commit. Commit
// installs the result; a bad blob is an error here and the backend stays
// as it was.
func (b *Backend) StageGroups(blobs map[int][]byte) (*StagedGroups, error) {
	s := &StagedGroups{}
	for g, blob := range blobs {
		commit, err := b.stageBlob(g, blob, blobCRC{}, copyInput)
		if err != nil {
			return nil, err
		}
		s.groups = append(s.groups, g)
		s.commits = append(s.commits, commit)
	}
	return s, nil
}

// Groups returns the staged key groups, in no particular order.
func (s *StagedGroups) Groups() []int { return append([]int(nil), s.groups...) }

// Commit installs the staged groups, as RestoreGroup would have, on the
// backend owner's goroutine. Only a table implemented elsewhere can fail
// here; it is restored in place and may be left changed.
func (s *StagedGroups) Commit() error {
	for _, commit := range s.commits {
		if err := commit(); err != nil {
			return err
		}
	}
	return nil
}
