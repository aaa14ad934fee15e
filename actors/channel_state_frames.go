package actors

import (
	"fmt"
	"sync"

	"github.com/weirstream/weir/inflight"
	"github.com/weirstream/weir/store"
)

// frameLoc is where one captured buffer is stored: a frame of the blob of
// checkpoint ckpt, captured on input.
type frameLoc struct {
	input int
	ckpt  uint64
	ref   store.BlobRef // exactly the frame
}

// frameView is where the buffers captured by the last checkpoint the task
// was told completed (at) are stored. The map is never changed.
type frameView struct {
	at   uint64
	locs map[*Buffer]frameLoc
}

// taskFrames lets a checkpoint refer to the buffers an earlier one already
// stored instead of writing them again: a backpressured channel keeps the
// same buffers queued across consecutive unaligned checkpoints. A buffer
// is known by identity (captured buffers are never recycled or changed),
// on the input it was captured on. Only the last completed checkpoint is
// referred to, and only when it is the last one the task snapshotted: a
// checkpoint in flight or aborted since may never complete, so with one
// there the next writes its channel state whole.
type taskFrames struct {
	committed frameView
	lastSnap  uint64 // the newest checkpoint the task took a snapshot for
	mu        sync.Mutex
	pending   map[uint64]map[*Buffer]frameLoc // written by the uploader
}

// viewFor returns the locations checkpoint id may refer to, and notes id
// as the task's newest snapshot.
func (f *taskFrames) viewFor(id uint64) frameView {
	var v frameView
	if f.committed.at != 0 && f.committed.at == f.lastSnap {
		v = f.committed
	}
	f.lastSnap = max(f.lastSnap, id)
	return v
}

// restored makes the channel state the task restored from completed
// checkpoint id, where it is stored, the buffers the next checkpoint may
// refer to while they wait for replay.
func (f *taskFrames) restored(id uint64, locs map[*Buffer]frameLoc) {
	f.committed = frameView{at: id, locs: locs}
	f.lastSnap = max(f.lastSnap, id)
}

// record keeps the locations of the buffers checkpoint id captured, for
// when it completes. It runs on the uploader before the acknowledgement.
func (f *taskFrames) record(id uint64, locs map[*Buffer]frameLoc) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.pending == nil {
		f.pending = map[uint64]map[*Buffer]frameLoc{}
	}
	f.pending[id] = locs
}

// confirm makes the buffers checkpoint id stored the ones later checkpoints
// refer to.
func (f *taskFrames) confirm(id uint64) {
	if id <= f.committed.at {
		return
	}
	f.mu.Lock()
	locs := f.pending[id]
	for k := range f.pending {
		if k <= id {
			delete(f.pending, k)
		}
	}
	f.mu.Unlock()
	f.committed = frameView{at: id, locs: locs}
}

// forget drops what checkpoint id recorded (it was aborted).
func (f *taskFrames) forget(id uint64) {
	f.mu.Lock()
	delete(f.pending, id)
	f.mu.Unlock()
}

// partLayout is one run of a channel section: frames this checkpoint
// writes (own, at off in its blob) or frames an earlier one stored (ref).
type partLayout struct {
	own       bool
	off, size int64
	ckpt      uint64
	ref       store.BlobRef
	buffers   int
}

// newFrame is a buffer this checkpoint writes, at off in its blob.
type newFrame struct {
	buf       *Buffer
	input     int
	off, size int64
	crc       uint32
}

// channelStats counts the channel state of a checkpoint: bytes written,
// bytes referred to in earlier checkpoints' blobs, buffers.
type channelStats struct {
	written, referenced, buffers int64
}

// encodeChannels appends the channel state of ck to b: per input, the
// buffers view does not place as frames, and the parts that list, in
// order, runs of those and of frames earlier checkpoints stored.
func (t *task) encodeChannels(b *taskBlob, ck *taskCheckpoint) (channelStats, error) {
	var st channelStats
	for i, bufs := range ck.captured {
		if len(bufs) == 0 {
			continue
		}
		codec := t.op.Inputs[t.in.chans[i].edgeIndex].Codec
		sec := channelSection{input: i, buffers: len(bufs), off: b.end()}
		batches := make([]inflight.Batch, len(bufs))
		for k, buf := range bufs {
			// Numbered in capture order: restored buffers not yet replayed come
			// first and carry seqs of an earlier channel incarnation, and
			// keep their replay round.
			batches[k] = capturedBatch(uint64(k+1), buf)
			sec.records += buf.Records.Len()
			if loc, ok := ck.frames.locs[buf]; ok && loc.input == i {
				sec.parts = appendRef(sec.parts, loc)
				st.referenced += loc.ref.Size
				continue
			}
			off := b.end()
			var err error
			if b.bytes, err = inflight.AppendFrame(b.bytes, codec, batches[k]); err != nil {
				return st, fmt.Errorf("channel state of input %d: %w", i, err)
			}
			size := b.end() - off
			b.frames = append(b.frames, newFrame{buf: buf, input: i, off: off, size: size, crc: store.Checksum(b.at(off, size))})
			if n := len(sec.parts); n > 0 && sec.parts[n-1].own {
				sec.parts[n-1].size += size
				sec.parts[n-1].buffers++
			} else {
				sec.parts = append(sec.parts, partLayout{own: true, off: off, size: size, buffers: 1})
			}
		}
		sec.size = b.end() - sec.off
		sec.rounds = inflight.RoundsOf(batches, ck.id)
		b.channels = append(b.channels, sec)
		st.written += sec.size
		st.buffers += int64(len(bufs))
	}
	return st, nil
}

// appendRef adds the stored frame loc to parts, extending the last part
// when loc follows it in the same blob.
func appendRef(parts []partLayout, loc frameLoc) []partLayout {
	if n := len(parts); n > 0 {
		p := &parts[n-1]
		if !p.own && p.ckpt == loc.ckpt && p.ref.Name == loc.ref.Name && p.ref.Offset+p.ref.Size == loc.ref.Offset {
			p.ref.CRC32C = store.CombineChecksums(p.ref.CRC32C, loc.ref.CRC32C, loc.ref.Size)
			p.ref.Size += loc.ref.Size
			p.buffers++
			return parts
		}
	}
	return append(parts, partLayout{ckpt: loc.ckpt, ref: loc.ref, buffers: 1})
}

// channelBlobs turns the channel sections of b, stored as blob whole of
// checkpoint id, into manifest entries, and returns where every buffer
// they hold is stored.
func (b *taskBlob) channelBlobs(id uint64, whole store.BlobRef, view frameView, captured [][]*Buffer) ([]store.ChannelBlob, map[*Buffer]frameLoc) {
	sec := func(off, size int64) store.BlobRef {
		return store.Section(whole, off, b.at(off, size))
	}
	var out []store.ChannelBlob
	for _, c := range b.channels {
		cb := store.ChannelBlob{Input: c.input, Buffers: c.buffers, Records: c.records, Rounds: c.rounds}
		if c.size > 0 {
			cb.Blob = sec(c.off, c.size)
		}
		for _, p := range c.parts {
			if p.own {
				cb.Parts = append(cb.Parts, store.ChannelPart{Checkpoint: id, Ref: sec(p.off, p.size), Buffers: p.buffers})
			} else {
				cb.Parts = append(cb.Parts, store.ChannelPart{Checkpoint: p.ckpt, Ref: p.ref, Buffers: p.buffers})
			}
		}
		out = append(out, cb)
	}
	locs := make(map[*Buffer]frameLoc, len(b.frames))
	for _, f := range b.frames {
		locs[f.buf] = frameLoc{input: f.input, ckpt: id,
			ref: store.BlobRef{Name: whole.Name, Size: f.size, CRC32C: f.crc, Offset: f.off, Whole: whole.Size}}
	}
	for i, bufs := range captured {
		for _, buf := range bufs {
			if loc, ok := view.locs[buf]; ok && loc.input == i {
				locs[buf] = loc
			}
		}
	}
	return out, locs
}
