package actors

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/store"
)

// keyGroupChains picks, for the key groups an instance owns now, the
// chains of those that manifest m stores incrementally (whole section, then
// deltas), whichever task of operator op stored them.
func keyGroupChains(m *store.Manifest, op string, owned []int) map[int][]store.ChainLink {
	stored := map[int][]store.ChainLink{}
	for i := range m.Tasks {
		if m.Tasks[i].Operator != op {
			continue
		}
		for g, chain := range m.Tasks[i].KeyGroupChains {
			stored[g] = chain
		}
	}
	out := map[int][]store.ChainLink{}
	for _, g := range owned {
		if chain, ok := stored[g]; ok {
			out[g] = chain
		}
	}
	return out
}

// chainRead is one section of a restore of chains: link pos of group g.
type chainRead struct {
	g, pos int
}

// restoreChains restores the key groups m stores as chains: in rounds, the
// whole sections first, then each group's first delta, and so on, so that
// every group gets its sections in order; within a round the sections of
// each checkpoint are read together (a node's local copy first). An error
// names the checkpoint being restored, the operator, the key group and the
// checkpoint whose section failed.
func (t *task) restoreChains(ctx context.Context, m *store.Manifest, chains map[int][]store.ChainLink, stateful plan.Stateful) (store.ReadStats, error) {
	var read store.ReadStats
	longest := 0
	for _, chain := range chains {
		longest = max(longest, len(chain))
	}
	one := plan.Snapshot{CheckpointID: m.CheckpointID, KeyGroups: make(map[int][]byte, 1), KeyGroupCRCs: make(map[int]uint32, 1)}
	for pos := range longest {
		byCkpt := map[uint64][]chainRead{}
		for g, chain := range chains {
			if pos < len(chain) {
				byCkpt[chain[pos].Checkpoint] = append(byCkpt[chain[pos].Checkpoint], chainRead{g: g, pos: pos})
			}
		}
		ckpts := make([]uint64, 0, len(byCkpt))
		for c := range byCkpt {
			ckpts = append(ckpts, c)
		}
		slices.Sort(ckpts)
		for _, c := range ckpts {
			reads := byCkpt[c]
			secs := make([]store.SectionRequest, len(reads))
			for i, r := range reads {
				secs[i] = store.SectionRequest{Key: store.KeyGroupKey(t.op.Name, r.g), Ref: chains[r.g][r.pos].Ref}
			}
			what := func(i int) string {
				r := reads[i]
				return fmt.Sprintf("restore checkpoint %d, task %s, operator %s key group %d: section %d of %d, written by checkpoint %d",
					m.CheckpointID, t.name, t.op.Name, r.g, r.pos+1, len(chains[r.g]), c)
			}
			var loadErr error
			stats, err := store.EachSection(ctx, t.job.opts.Checkpoint.Store, m.Job, c, secs, func(i int, data []byte) error {
				if stateful == nil {
					return nil
				}
				g := reads[i].g
				clear(one.KeyGroups)
				clear(one.KeyGroupCRCs)
				one.KeyGroups[g] = data
				one.KeyGroupCRCs[g] = secs[i].Ref.CRC32C // EachSection verified it
				if err := stateful.RestoreState(one); err != nil {
					loadErr = fmt.Errorf("%s: %w", what(i), err)
					return loadErr
				}
				return nil
			})
			read.Add(stats)
			if loadErr != nil {
				return read, loadErr
			}
			var se *store.SectionError
			if errors.As(err, &se) && se.Index < len(reads) {
				return read, fmt.Errorf("%s: %w", what(se.Index), err)
			}
			if err != nil {
				return read, fmt.Errorf("restore checkpoint %d, task %s, key-group chains: %w", m.CheckpointID, t.name, err)
			}
		}
	}
	return read, nil
}
