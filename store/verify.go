package store

import (
	"context"
	"errors"
	"fmt"
	"sort"
)

// VerifyCheckpoint reads every blob that manifest m refers to (channel-state
// parts in earlier checkpoints' blobs too), each stored object once, and checks the size and CRC32C of every section. A failure
// wraps ErrCorrupt or ErrNotFound and names the checkpoint, the task and what
// the section holds (a key group, the operator state or the channel state of
// an input), as restoring it would.
func VerifyCheckpoint(ctx context.Context, st Store, m *Manifest) error {
	_, err := VerifyCheckpointExcept(ctx, st, m, nil)
	return err
}

// Verified is what VerifyCheckpointExcept read and left out.
type Verified struct {
	// Bytes and Sections are the sections read and checked.
	Bytes    int64
	Sections int
	// HeldBytes and HeldSections are the key-group sections left out.
	HeldBytes    int64
	HeldSections int
}

// VerifyCheckpointExcept is VerifyCheckpoint without reading the key-group
// sections held(operator, group) reports (nil: none), nor the other
// sections of their blobs: in a cluster, those a live node holds a copy of
// (a node's copy holds whole blobs), which the restore there verifies,
// reading the store only for a section whose copy fails.
func VerifyCheckpointExcept(ctx context.Context, st Store, m *Manifest, held func(operator string, group int) bool) (Verified, error) {
	var v Verified
	if err := checkRounds(m); err != nil {
		return v, err
	}
	if err := checkSplits(m); err != nil {
		return v, err
	}
	if err := verifyReferencedParts(ctx, st, m); err != nil {
		return v, err
	}
	refs, what := manifestRefs(m, held, &v)
	if len(refs) == 0 {
		return v, nil
	}
	_, err := GetSections(ctx, st, m.Job, m.CheckpointID, refs)
	var se *SectionError
	if errors.As(err, &se) && se.Index < len(what) {
		return v, fmt.Errorf("checkpoint %d, %s: %w", m.CheckpointID, what[se.Index], err)
	}
	if err != nil {
		return v, fmt.Errorf("checkpoint %d: %w", m.CheckpointID, err)
	}
	for _, r := range refs {
		v.Bytes += r.Size
	}
	v.Sections = len(refs)
	return v, nil
}

// manifestRefs lists every blob section of m with a description of what it
// holds, in the manifest's task order (key groups ascending), but the
// key-group sections held reports (nil: none) and every other section of a
// blob one of them lies in (a node's copy holds whole blobs), which it
// counts in v.
func manifestRefs(m *Manifest, held func(operator string, group int) bool, v *Verified) ([]BlobRef, []string) {
	heldBlobs := map[string]bool{}
	if held != nil {
		for _, ts := range m.Tasks {
			for g, ref := range ts.KeyGroups {
				if held(ts.Operator, g) {
					heldBlobs[ref.Name] = true
				}
			}
		}
	}
	var refs []BlobRef
	var what []string
	add := func(ref BlobRef, w string) {
		if heldBlobs[ref.Name] {
			v.HeldBytes += ref.Size
			v.HeldSections++
			return
		}
		refs = append(refs, ref)
		what = append(what, w)
	}
	for _, ts := range m.Tasks {
		task := fmt.Sprintf("task %s[%d]", ts.Operator, ts.Instance)
		groups := make([]int, 0, len(ts.KeyGroups))
		for g := range ts.KeyGroups {
			groups = append(groups, g)
		}
		sort.Ints(groups)
		for _, g := range groups {
			add(ts.KeyGroups[g], fmt.Sprintf("%s, key group %d", task, g))
		}
		if ts.OperatorState != nil {
			add(*ts.OperatorState, task+", operator state")
		}
		for _, cb := range ts.Channels {
			for _, ref := range ownChannelRefs(m, cb) {
				add(ref, fmt.Sprintf("%s, channel state of input %d", task, cb.Input))
			}
		}
	}
	return refs, what
}

// checkRounds checks every channel's replay rounds: each a run of at least
// one buffer of a checkpoint from 1 to m's own, adding up to its buffers.
func checkRounds(m *Manifest) error {
	for _, ts := range m.Tasks {
		for _, cb := range ts.Channels {
			if len(cb.Rounds) == 0 {
				continue
			}
			n := 0
			for _, r := range cb.Rounds {
				if r.Buffers < 1 || r.Checkpoint < 1 || r.Checkpoint > m.CheckpointID {
					n = -1
					break
				}
				n += r.Buffers
			}
			if n != cb.Buffers {
				return fmt.Errorf("checkpoint %d, task %s[%d], channel state of input %d: replay rounds %v do not split its %d buffers: %w",
					m.CheckpointID, ts.Operator, ts.Instance, cb.Input, cb.Rounds, cb.Buffers, ErrCorrupt)
			}
		}
	}
	return nil
}
