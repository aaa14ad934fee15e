package actors

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/store"
)

// checkpointSplits is every split of source op in manifest m with its
// offset. A manifest in which no task of op stored splits was written before
// splits were: each of its tasks served split Instance of the operator's
// parallelism, at SourceOffset.
func checkpointSplits(m *store.Manifest, op string) []store.SourceSplit {
	var splits []store.SourceSplit
	for _, ts := range m.Tasks {
		if ts.Operator == op {
			splits = append(splits, ts.Splits...)
		}
	}
	if len(splits) > 0 {
		return splits
	}
	for _, ts := range m.Tasks {
		if ts.Operator == op && ts.SourceOffset >= 0 {
			splits = append(splits, store.SourceSplit{ID: ts.Instance, Of: m.Parallelism[op], Offset: ts.SourceOffset})
		}
	}
	return splits
}

// AssignSplits deals splits to n instances: ordered by (Of, ID), the k-th
// goes to instance k mod n, so each instance gets as many as any other, give
// or take one, and split s of a source cut into N splits goes to instance
// s mod n. At the parallelism a source first ran at, every instance gets its
// own split back. Instances beyond the number of splits get none.
func AssignSplits(splits []store.SourceSplit, n int) ([][]store.SourceSplit, error) {
	if n < 1 {
		return nil, fmt.Errorf("assign %d splits to %d instances", len(splits), n)
	}
	sorted := slices.SortedFunc(slices.Values(splits), func(a, b store.SourceSplit) int {
		return cmp.Or(cmp.Compare(a.Of, b.Of), cmp.Compare(a.ID, b.ID))
	})
	out := make([][]store.SourceSplit, n)
	for k, s := range sorted {
		out[k%n] = append(out[k%n], s)
	}
	return out, nil
}

// restoreSplits hands a split source's instance the checkpoint's splits it
// now serves and returns how many records they had produced in all.
func (t *task) restoreSplits(m *store.Manifest, src plan.SplitSource) (int64, error) {
	all, err := AssignSplits(checkpointSplits(m, t.op.Name), t.op.Parallelism)
	if err != nil {
		return 0, err
	}
	mine := make([]plan.Split, len(all[t.instance]))
	var offset int64
	for i, s := range all[t.instance] {
		mine[i] = plan.Split{ID: s.ID, Of: s.Of, Offset: s.Offset}
		offset += s.Offset
	}
	if err := src.AssignSplits(mine); err != nil {
		return 0, fmt.Errorf("assign %d splits: %w", len(mine), err)
	}
	return offset, nil
}

// storedSplits is a split source's splits as the manifest stores them; nil
// for any other source.
func storedSplits(src plan.Source) []store.SourceSplit {
	ss, ok := src.(plan.SplitSource)
	if !ok {
		return nil
	}
	splits := ss.Splits()
	out := make([]store.SourceSplit, len(splits))
	for i, s := range splits {
		out[i] = store.SourceSplit{ID: s.ID, Of: s.Of, Offset: s.Offset}
	}
	return out
}
