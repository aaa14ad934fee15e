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
	if err := checkRounds(m); err != nil {
		return err
	}
	if err := checkSplits(m); err != nil {
		return err
	}
	if err := verifyReferencedParts(ctx, st, m); err != nil {
		return err
	}
	refs, what := manifestRefs(m)
	if len(refs) == 0 {
		return nil
	}
	_, err := GetSections(ctx, st, m.Job, m.CheckpointID, refs)
	var se *SectionError
	if errors.As(err, &se) && se.Index < len(what) {
		return fmt.Errorf("checkpoint %d, %s: %w", m.CheckpointID, what[se.Index], err)
	}
	if err != nil {
		return fmt.Errorf("checkpoint %d: %w", m.CheckpointID, err)
	}
	return nil
}

// manifestRefs lists every blob section of m with a description of what it
// holds, in the manifest's task order (key groups ascending).
func manifestRefs(m *Manifest) ([]BlobRef, []string) {
	var refs []BlobRef
	var what []string
	for _, ts := range m.Tasks {
		task := fmt.Sprintf("task %s[%d]", ts.Operator, ts.Instance)
		groups := make([]int, 0, len(ts.KeyGroups))
		for g := range ts.KeyGroups {
			groups = append(groups, g)
		}
		sort.Ints(groups)
		for _, g := range groups {
			refs = append(refs, ts.KeyGroups[g])
			what = append(what, fmt.Sprintf("%s, key group %d", task, g))
		}
		if ts.OperatorState != nil {
			refs = append(refs, *ts.OperatorState)
			what = append(what, task+", operator state")
		}
		for _, cb := range ts.Channels {
			for _, ref := range ownChannelRefs(m, cb) {
				refs = append(refs, ref)
				what = append(what, fmt.Sprintf("%s, channel state of input %d", task, cb.Input))
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
