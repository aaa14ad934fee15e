package actors

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/weirstream/weir/inflight"
	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/store"
)

// channelRead is one section a channel-state restore reads: part pos of
// channel ch (pos -1: the channel's whole blob, stored without parts).
type channelRead struct {
	ch, pos int
}

// readChannelState reads the channel state cbs that instance of operator
// op stored in checkpoint m, each channel's buffers in order, numbered from
// 1 and labelled with their replay rounds, and where each buffer is stored
// (the zero frameLoc for channels stored whole, without parts; input not
// set). have holds sections of m's own blobs already read (by ref), which
// are not read again. Parts stored by earlier
// checkpoints are read from those checkpoints' blobs, each checkpoint's
// sections together (a node's local copy first). codecOf gives a channel's
// codec. An error names the checkpoint, the task's input and the
// checkpoint whose section failed.
func readChannelState(ctx context.Context, st store.Store, m *store.Manifest, op string, instance int, cbs []store.ChannelBlob,
	have map[store.BlobRef][]byte, codecOf func(store.ChannelBlob) plan.BatchCodec) ([][]inflight.Batch, [][]frameLoc, store.ReadStats, error) {
	var read store.ReadStats
	byCkpt := map[uint64][]channelRead{}
	for ch, cb := range cbs {
		if len(cb.Parts) == 0 {
			byCkpt[m.CheckpointID] = append(byCkpt[m.CheckpointID], channelRead{ch: ch, pos: -1})
			continue
		}
		for pos, p := range cb.Parts {
			byCkpt[p.Checkpoint] = append(byCkpt[p.Checkpoint], channelRead{ch: ch, pos: pos})
		}
	}
	ckpts := make([]uint64, 0, len(byCkpt))
	for c := range byCkpt {
		ckpts = append(ckpts, c)
	}
	slices.Sort(ckpts)
	parts := make([][][]inflight.Batch, len(cbs))
	locs := make([][][]frameLoc, len(cbs))
	for ch, cb := range cbs {
		parts[ch] = make([][]inflight.Batch, max(1, len(cb.Parts)))
		locs[ch] = make([][]frameLoc, max(1, len(cb.Parts)))
	}
	for _, c := range ckpts {
		reads := byCkpt[c]
		secs := make([]store.SectionRequest, len(reads))
		for i, r := range reads {
			ref := cbs[r.ch].Blob
			if r.pos >= 0 {
				ref = cbs[r.ch].Parts[r.pos].Ref
			}
			secs[i] = store.SectionRequest{Key: store.ChannelKey(op, instance, cbs[r.ch].Input), Ref: ref}
		}
		what := func(i int) string {
			r := reads[i]
			s := fmt.Sprintf("restore checkpoint %d, %s[%d] channel state of input %d", m.CheckpointID, op, instance, cbs[r.ch].Input)
			if r.pos >= 0 {
				s += fmt.Sprintf(": part %d of %d, written by checkpoint %d", r.pos+1, len(cbs[r.ch].Parts), c)
			}
			return s
		}
		data := prefetched(have, secs)
		var err error
		if c != m.CheckpointID || data == nil {
			var stats store.ReadStats
			data, stats, err = store.ReadSections(ctx, st, m.Job, c, secs)
			read.Add(stats)
		}
		var se *store.SectionError
		if errors.As(err, &se) && se.Index < len(reads) {
			return nil, nil, read, fmt.Errorf("%s: %w", what(se.Index), err)
		}
		if err != nil {
			return nil, nil, read, fmt.Errorf("restore checkpoint %d, %s[%d] channel state written by checkpoint %d: %w", m.CheckpointID, op, instance, c, err)
		}
		for i, r := range reads {
			cb := cbs[r.ch]
			var batches []inflight.Batch
			if r.pos < 0 {
				batches, err = inflight.Decode(codecOf(cb), data[i])
				locs[r.ch][0] = make([]frameLoc, len(batches))
			} else {
				var ends []int
				batches, ends, err = inflight.DecodeFrames(codecOf(cb), data[i], cb.Parts[r.pos].Buffers, 1)
				locs[r.ch][r.pos] = framesOf(c, cb.Parts[r.pos].Ref, data[i], ends)
			}
			if err != nil {
				return nil, nil, read, fmt.Errorf("%s: %w", what(i), err)
			}
			parts[r.ch][max(0, r.pos)] = batches
		}
	}
	out := make([][]inflight.Batch, len(cbs))
	outLocs := make([][]frameLoc, len(cbs))
	for ch, cb := range cbs {
		outLocs[ch] = slices.Concat(locs[ch]...)
		batches := slices.Concat(parts[ch]...)
		if len(cb.Parts) > 0 {
			for k := range batches {
				batches[k].Seq = uint64(k + 1)
			}
		}
		if err := inflight.LabelRounds(batches, cb.Rounds, m.CheckpointID); err != nil {
			return nil, nil, read, fmt.Errorf("restore checkpoint %d, %s[%d] channel state of input %d: %w", m.CheckpointID, op, instance, cb.Input, err)
		}
		out[ch] = batches
	}
	return out, outLocs, read, nil
}

// framesOf is where each frame of a run read from section ref of the blob
// of checkpoint ckpt is stored, given where each frame ends in data.
func framesOf(ckpt uint64, ref store.BlobRef, data []byte, ends []int) []frameLoc {
	out := make([]frameLoc, len(ends))
	start := 0
	for k, end := range ends {
		if ref.Whole > 0 {
			out[k] = frameLoc{ckpt: ckpt, ref: store.BlobRef{Name: ref.Name, Size: int64(end - start),
				CRC32C: store.Checksum(data[start:end]), Offset: ref.Offset + int64(start), Whole: ref.Whole}}
		}
		start = end
	}
	return out
}

// ownChannelSections lists the sections of checkpoint m's own blobs that
// channel state cbs of instance of op reads, so that a restore reads them
// with the task's other sections (one fetch of each stored object).
func ownChannelSections(m *store.Manifest, op string, instance int, cbs []store.ChannelBlob) []store.SectionRequest {
	var out []store.SectionRequest
	for _, cb := range cbs {
		key := store.ChannelKey(op, instance, cb.Input)
		if len(cb.Parts) == 0 {
			out = append(out, store.SectionRequest{Key: key, Ref: cb.Blob})
			continue
		}
		for _, p := range cb.Parts {
			if p.Checkpoint == m.CheckpointID {
				out = append(out, store.SectionRequest{Key: key, Ref: p.Ref})
			}
		}
	}
	return out
}

// prefetched is the sections secs from have, or nil unless have holds
// them all.
func prefetched(have map[store.BlobRef][]byte, secs []store.SectionRequest) [][]byte {
	if have == nil {
		return nil
	}
	out := make([][]byte, len(secs))
	for i, s := range secs {
		d, ok := have[s.Ref]
		if !ok {
			return nil
		}
		out[i] = d
	}
	return out
}
