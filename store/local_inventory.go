package store

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/weirstream/weir/keygroups"
)

// LocalHolding is the state of one operator of one job at one checkpoint
// that a node's local copy holds, summarised: key-group ranges, not one
// entry per section.
type LocalHolding struct {
	Job        string            `json:"job" msgpack:"job"`
	Operator   string            `json:"operator" msgpack:"op"`
	Checkpoint uint64            `json:"checkpoint" msgpack:"cp"`
	KeyGroups  []keygroups.Range `json:"key_groups,omitempty" msgpack:"kg,omitempty"` // ascending, disjoint, not adjacent
	// KeyGroupBytes, OperatorStateBytes and ChannelBytes are the sizes of
	// the sections of each kind; Bytes is their sum.
	KeyGroupBytes      int64 `json:"key_group_bytes" msgpack:"kgb"`
	OperatorStateBytes int64 `json:"operator_state_bytes,omitempty" msgpack:"osb,omitempty"`
	ChannelSections    int   `json:"channel_sections,omitempty" msgpack:"chs,omitempty"`
	ChannelBytes       int64 `json:"channel_bytes,omitempty" msgpack:"chb,omitempty"`
	Bytes              int64 `json:"bytes" msgpack:"b"`
}

// Inventory summarises the local copy from its indexes: per job, operator
// and checkpoint, the key-group ranges and bytes held. A damaged index is
// logged and left out; so is a section whose blob file is missing or of the
// wrong size. Sorted by job, operator, checkpoint.
func (m *Mirror) Inventory(ctx context.Context) ([]LocalHolding, error) {
	jobs, err := m.Local.jobs()
	if err != nil {
		return nil, fmt.Errorf("local state inventory: %w", err)
	}
	var out []LocalHolding
	for _, job := range jobs {
		ids, err := m.Local.checkpointIDs(job)
		if err != nil {
			return nil, fmt.Errorf("local state inventory: %w", err)
		}
		for _, id := range ids {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			x := m.localIndex(job, id)
			if x == nil {
				continue
			}
			hs, err := m.Local.holdings(x)
			if err != nil {
				return nil, fmt.Errorf("local state inventory: %w", err)
			}
			out = append(out, hs...)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Job != b.Job {
			return a.Job < b.Job
		}
		if a.Operator != b.Operator {
			return a.Operator < b.Operator
		}
		return a.Checkpoint < b.Checkpoint
	})
	return out, nil
}

// holdings summarises one checkpoint's index per operator, counting only
// sections whose blob file is present with the expected size.
func (l *Local) holdings(x *localIndex) ([]LocalHolding, error) {
	present := map[string]bool{}
	byOp := map[string]*LocalHolding{}
	groups := map[string][]int{}
	var ops []string
	for _, e := range x.Sections {
		ok, seen := present[e.Ref.Name]
		if !seen {
			size, err := l.blobSize(x.Job, x.Checkpoint, e.Ref.Name)
			if err != nil && !errors.Is(err, ErrNotFound) {
				return nil, err
			}
			want := e.Ref.Whole
			if want == 0 {
				want = e.Ref.Size
			}
			ok = err == nil && size == want
			present[e.Ref.Name] = ok
		}
		if !ok {
			continue
		}
		h := byOp[e.Key.Operator]
		if h == nil {
			h = &LocalHolding{Job: x.Job, Operator: e.Key.Operator, Checkpoint: x.Checkpoint}
			byOp[e.Key.Operator] = h
			ops = append(ops, e.Key.Operator)
		}
		switch e.Key.Kind {
		case KindKeyGroup:
			groups[e.Key.Operator] = append(groups[e.Key.Operator], e.Key.KeyGroup)
			h.KeyGroupBytes += e.Ref.Size
		case KindOperatorState:
			h.OperatorStateBytes += e.Ref.Size
		case KindChannel:
			h.ChannelSections++
			h.ChannelBytes += e.Ref.Size
		}
		h.Bytes += e.Ref.Size
	}
	out := make([]LocalHolding, 0, len(ops))
	for _, op := range ops {
		h := byOp[op]
		h.KeyGroups = compactRanges(groups[op])
		out = append(out, *h)
	}
	return out, nil
}

// compactRanges turns key groups into ascending inclusive ranges, merging
// adjacent groups.
func compactRanges(groups []int) []keygroups.Range {
	if len(groups) == 0 {
		return nil
	}
	gs := append([]int(nil), groups...)
	sort.Ints(gs)
	out := []keygroups.Range{{Start: gs[0], End: gs[0]}}
	for _, g := range gs[1:] {
		last := &out[len(out)-1]
		switch {
		case g <= last.End:
		case g == last.End+1:
			last.End = g
		default:
			out = append(out, keygroups.Range{Start: g, End: g})
		}
	}
	return out
}
