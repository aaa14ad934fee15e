package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
)

// ChannelPart is a run of Buffers consecutive buffers of a channel's state,
// stored one frame after another in the section Ref of the blob of
// checkpoint Checkpoint. A checkpoint whose barrier overtook buffers an
// earlier completed checkpoint already stored refers to them so instead of
// writing them again.
type ChannelPart struct {
	Checkpoint uint64  `msgpack:"ckpt"`
	Ref        BlobRef `msgpack:"ref"`
	Buffers    int     `msgpack:"buffers"`
}

// checkChannelParts validates the channel state c of a task of manifest m:
// without parts, its blob; with parts, each one written by a checkpoint no
// later than m, with a valid blob name and at least one buffer, the parts
// adding up to the channel's buffers.
func checkChannelParts(m *Manifest, c ChannelBlob) error {
	if len(c.Parts) == 0 {
		return ValidateBlobName(c.Blob.Name)
	}
	if c.Blob.Name != "" {
		if err := ValidateBlobName(c.Blob.Name); err != nil {
			return fmt.Errorf("channel state of input %d: %w", c.Input, err)
		}
	}
	n := 0
	for i, p := range c.Parts {
		if err := ValidateBlobName(p.Ref.Name); err != nil {
			return fmt.Errorf("channel state of input %d part %d: %w", c.Input, i, err)
		}
		if p.Checkpoint == 0 || p.Checkpoint > m.CheckpointID || p.Buffers < 1 {
			return fmt.Errorf("channel state of input %d part %d: %d buffers written by checkpoint %d, in checkpoint %d: %w",
				c.Input, i, p.Buffers, p.Checkpoint, m.CheckpointID, ErrInvalidName)
		}
		n += p.Buffers
	}
	if n != c.Buffers {
		return fmt.Errorf("channel state of input %d: parts hold %d buffers, want %d: %w", c.Input, n, c.Buffers, ErrInvalidName)
	}
	return nil
}

// channelPartCheckpoints adds to seen the earlier checkpoints whose blobs
// the channel state of m refers to: they must be kept while m is.
func channelPartCheckpoints(m *Manifest, seen map[uint64]bool) {
	for _, t := range m.Tasks {
		for _, c := range t.Channels {
			for _, p := range c.Parts {
				if p.Checkpoint != m.CheckpointID {
					seen[p.Checkpoint] = true
				}
			}
		}
	}
}

// verifyReferencedParts reads the channel-state parts m refers to in
// earlier checkpoints' blobs, each checkpoint's at once, and checks their
// sizes and checksums, naming the task, input and checkpoint of a failure.
func verifyReferencedParts(ctx context.Context, st Store, m *Manifest) error {
	refs := map[uint64][]BlobRef{}
	what := map[uint64][]string{}
	for _, ts := range m.Tasks {
		for _, c := range ts.Channels {
			for _, p := range c.Parts {
				if p.Checkpoint == m.CheckpointID {
					continue
				}
				refs[p.Checkpoint] = append(refs[p.Checkpoint], p.Ref)
				what[p.Checkpoint] = append(what[p.Checkpoint], fmt.Sprintf("task %s[%d], channel state of input %d, written by checkpoint %d",
					ts.Operator, ts.Instance, c.Input, p.Checkpoint))
			}
		}
	}
	ids := make([]uint64, 0, len(refs))
	for id := range refs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		_, err := GetSections(ctx, st, m.Job, id, refs[id])
		var se *SectionError
		if errors.As(err, &se) && se.Index < len(what[id]) {
			return fmt.Errorf("checkpoint %d, %s: %w", m.CheckpointID, what[id][se.Index], err)
		}
		if err != nil {
			return fmt.Errorf("checkpoint %d, channel state written by checkpoint %d: %w", m.CheckpointID, id, err)
		}
	}
	return nil
}

// ownChannelRefs is the sections of m's own blobs that the channel state c
// reads: its blob without parts, else its parts this checkpoint wrote.
func ownChannelRefs(m *Manifest, c ChannelBlob) []BlobRef {
	if len(c.Parts) == 0 {
		return []BlobRef{c.Blob}
	}
	var out []BlobRef
	for _, p := range c.Parts {
		if p.Checkpoint == m.CheckpointID {
			out = append(out, p.Ref)
		}
	}
	return out
}

// channelRange is, for a channel-state part req that lies inside the
// section local of a node's copy (the buffers its checkpoint wrote for that
// channel, of which a later checkpoint refers to a run), the local ref of
// just that range, verified on read against req's checksum.
func channelRange(local BlobRef, req SectionRequest) (BlobRef, bool) {
	r := req.Ref
	if req.Key.Kind != KindChannel || r.Whole == 0 || local.Whole != r.Whole || local.Name != r.Name ||
		(local.Offset == r.Offset && local.Size == r.Size) {
		return BlobRef{}, false
	}
	if r.Offset < local.Offset || r.Offset+r.Size > local.Offset+local.Size {
		return BlobRef{}, false
	}
	return r, true
}
