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
	// the sections of each kind; Bytes is their sum. A key group stored
	// incrementally counts the bytes of its whole chain (its whole section
	// and every delta on it, whichever checkpoints wrote them).
	KeyGroupBytes      int64 `json:"key_group_bytes" msgpack:"kgb"`
	OperatorStateBytes int64 `json:"operator_state_bytes,omitempty" msgpack:"osb,omitempty"`
	ChannelSections    int   `json:"channel_sections,omitempty" msgpack:"chs,omitempty"`
	ChannelBytes       int64 `json:"channel_bytes,omitempty" msgpack:"chb,omitempty"`
	Bytes              int64 `json:"bytes" msgpack:"b"`
	// ChainBytes is the part of KeyGroupBytes in key groups stored
	// incrementally: a restore applies a chain's sections in turn and keeps
	// none of their bytes, where it adopts those of a whole section.
	ChainBytes int64 `json:"chain_bytes,omitempty" msgpack:"kcb,omitempty"`
}

// Inventory summarises the local copy from its indexes: per job, operator
// and checkpoint, the key-group ranges and bytes held. A damaged index is
// logged and left out; so is a section whose blob file is missing or of the
// wrong size, and a key group of an incremental checkpoint whose chain is
// not all held (a link missing from its checkpoint's index or blob file).
// Sorted by job, operator, checkpoint.
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
		indexes := map[uint64]*localIndex{}
		indexOf := func(id uint64) *localIndex {
			x, ok := indexes[id]
			if !ok {
				x = m.localIndex(job, id)
				indexes[id] = x
			}
			return x
		}
		for _, id := range ids {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			x := indexOf(id)
			if x == nil {
				continue
			}
			hs, err := m.Local.holdings(x, indexOf)
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
// sections whose blob file is present with the expected size; a key
// group's delta counts with the earlier links of its chain (found through
// indexOf, the index of a checkpoint or nil), and only when they are all
// held too.
func (l *Local) holdings(x *localIndex, indexOf func(uint64) *localIndex) ([]LocalHolding, error) {
	blobs := heldBlobs{l: l, job: x.Job, present: map[LocalCheckpoint]map[string]bool{}}
	byOp := map[string]*LocalHolding{}
	groups := map[string][]int{}
	var ops []string
	for _, e := range x.Sections {
		ok, err := blobs.has(x.Checkpoint, e.Ref)
		if err != nil {
			return nil, err
		}
		size := e.Ref.Size
		for _, link := range e.Chain {
			if !ok {
				break
			}
			held, found := indexOf(link.Checkpoint).lookup(e.Key)
			ok = found && held.Ref.Size == link.Ref.Size && held.Ref.CRC32C == link.Ref.CRC32C
			if ok {
				if ok, err = blobs.has(link.Checkpoint, held.Ref); err != nil {
					return nil, err
				}
			}
			size += link.Ref.Size
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
			h.KeyGroupBytes += size
			if len(e.Chain) > 0 {
				h.ChainBytes += size
			}
		case KindOperatorState:
			h.OperatorStateBytes += size
		case KindChannel:
			h.ChannelSections++
			h.ChannelBytes += size
		}
		h.Bytes += size
	}
	out := make([]LocalHolding, 0, len(ops))
	for _, op := range ops {
		h := byOp[op]
		h.KeyGroups = compactRanges(groups[op])
		out = append(out, *h)
	}
	return out, nil
}

// heldBlobs answers whether the local blob files of one job that sections
// name are present with the expected size, asking the filesystem once per
// file.
type heldBlobs struct {
	l       *Local
	job     string
	present map[LocalCheckpoint]map[string]bool
}

// has reports whether the blob file of checkpoint ckpt that ref is a
// section of is present with the size ref expects.
func (b heldBlobs) has(ckpt uint64, ref BlobRef) (bool, error) {
	c := LocalCheckpoint{Job: b.job, Checkpoint: ckpt}
	files := b.present[c]
	if files == nil {
		files = map[string]bool{}
		b.present[c] = files
	}
	if ok, seen := files[ref.Name]; seen {
		return ok, nil
	}
	size, err := b.l.blobSize(b.job, ckpt, ref.Name)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return false, err
	}
	want := ref.Whole
	if want == 0 {
		want = ref.Size
	}
	ok := err == nil && size == want
	files[ref.Name] = ok
	return ok, nil
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
