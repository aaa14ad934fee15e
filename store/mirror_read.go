package store

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/rs/zerolog"
)

// ReadSections implements LocalFirstReader: each section is read from this
// node's copy when the checkpoint's local index places it (by SectionKey,
// not by blob name) and it matches the manifest's reference and checksum;
// otherwise from the primary. A damaged local section is logged (job,
// checkpoint, operator, key group or instance and input) and fetched
// remotely while the others stay local. A missing index reads everything
// remotely; a damaged one is logged and ignored.
func (m *Mirror) ReadSections(ctx context.Context, job string, ckpt uint64, secs []SectionRequest) ([][]byte, ReadStats, error) {
	out := make([][]byte, len(secs))
	stats, err := m.eachSection(ctx, job, ckpt, secs, false, func(i int, data []byte) error {
		out[i] = data
		return nil
	})
	if err != nil {
		return nil, stats, err
	}
	return out, stats, nil
}

// eachSection is ReadSections handing each section to fn as it is read
// (local ones first); with reuse, local sections are read into one buffer
// that fn's data aliases until fn returns.
func (m *Mirror) eachSection(ctx context.Context, job string, ckpt uint64, secs []SectionRequest, reuse bool, fn func(i int, data []byte) error) (ReadStats, error) {
	idx := m.localIndex(job, ckpt)
	return m.readLocalFirst(ctx, job, ckpt, refsOf(secs), func(i int) (BlobRef, bool) {
		e, ok := idx.lookup(secs[i].Key)
		if !ok {
			return BlobRef{}, false
		}
		if ref, ok := channelRange(e.Ref, secs[i]); ok {
			return ref, true
		}
		if e.Ref.Size != secs[i].Ref.Size || e.Ref.CRC32C != secs[i].Ref.CRC32C {
			secs[i].Key.logFields(m.Log.Warn().Str("job", job).Uint64("checkpoint", ckpt)).
				Int64("local_size", e.Ref.Size).Int64("size", secs[i].Ref.Size).
				Msg("local section is not the checkpoint's: reading the checkpoint store")
			return BlobRef{}, false
		}
		return e.Ref, true
	}, true, func(i int, e *zerolog.Event) *zerolog.Event { return secs[i].Key.logFields(e) }, reuse, fn)
}

// GetSections implements SectionReader, section by section: each ref from
// the local copy of its blob when that section verifies, else from the
// primary (the sections that failed, each object fetched once).
func (m *Mirror) GetSections(ctx context.Context, job string, ckpt uint64, refs []BlobRef) ([][]byte, error) {
	out := make([][]byte, len(refs))
	_, err := m.readLocalFirst(ctx, job, ckpt, refs, func(i int) (BlobRef, bool) { return refs[i], true }, false,
		func(i int, e *zerolog.Event) *zerolog.Event { return e.Str("blob", refs[i].Name) }, false,
		func(i int, data []byte) error {
			out[i] = data
			return nil
		})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// readLocalFirst reads want[i] from the local section local(i) names, when
// there is one and it verifies, and the rest from the primary, and hands
// each to deliver (local ones first); describe adds log fields naming
// section i. A local section that does not verify is logged; so is a
// missing one when indexed (an index placed it there). With reuse, local
// sections are read into one buffer, which deliver's data aliases only
// until deliver returns. An error of deliver stops the read and is
// returned as it is; Took counts reading only, not deliver.
func (m *Mirror) readLocalFirst(ctx context.Context, job string, ckpt uint64, want []BlobRef,
	local func(i int) (BlobRef, bool), indexed bool, describe func(i int, e *zerolog.Event) *zerolog.Event,
	reuse bool, deliver func(i int, data []byte) error) (stats ReadStats, err error) {
	var delivering time.Duration // in deliver, not reading
	start := time.Now()
	hand := func(i int, data []byte) error {
		t := time.Now()
		err := deliver(i, data)
		delivering += time.Since(t)
		return err
	}
	defer func() { stats.Took = time.Since(start) - delivering }()
	// The sections to read locally, in order; the others and those whose
	// copy fails are read from the primary.
	var locals []int
	var refs []BlobRef
	var remote []int
	for i := range want {
		if ref, ok := local(i); ok && !m.Local.closed.Load() {
			locals, refs = append(locals, i), append(refs, ref)
		} else {
			remote = append(remote, i)
		}
	}
	files := &sectionFiles{l: m.Local, job: job, ckpt: ckpt}
	defer files.Close()
	var buf []byte // reused across local sections with reuse
	read := func(k int) sectionRead {
		var into []byte
		if reuse {
			into = buf
		}
		data, err := files.readInto(refs[k], into)
		if err == nil && reuse && cap(data) > cap(buf) {
			buf = data[:0]
		}
		return sectionRead{data: data, err: err}
	}
	if !reuse && len(locals) > 1 {
		// Each section in new memory: read ahead in parallel.
		p := prefetchLocal(ctx, m.Local, job, ckpt, refs)
		defer p.stop()
		read = func(int) sectionRead { return p.next() }
	}
	failed := false
	for k, i := range locals {
		if err := ctx.Err(); err != nil {
			return stats, err
		}
		r := read(k)
		if r.err == nil {
			stats.LocalBytes += int64(len(r.data))
			stats.LocalSections++
			if err := hand(i, r.data); err != nil {
				return stats, err
			}
			continue
		}
		if indexed || !errors.Is(r.err, ErrNotFound) {
			describe(i, m.Log.Warn().Err(r.err).Str("job", job).Uint64("checkpoint", ckpt)).
				Msg("local section damaged: reading it from the checkpoint store")
		}
		remote, failed = append(remote, i), true
	}
	if failed {
		slices.Sort(remote)
	}
	if len(remote) == 0 {
		return stats, nil
	}
	remoteRefs := make([]BlobRef, len(remote))
	for j, i := range remote {
		remoteRefs[j] = want[i]
	}
	data, err := GetSections(ctx, m.Primary, job, ckpt, remoteRefs)
	if err != nil {
		var se *SectionError
		if errors.As(err, &se) && se.Index < len(remote) {
			return stats, &SectionError{Index: remote[se.Index], Err: se.Err}
		}
		return stats, err
	}
	for _, d := range data {
		stats.RemoteBytes += int64(len(d))
		stats.RemoteSections++
	}
	for j, i := range remote {
		if err := hand(i, data[j]); err != nil {
			return stats, err
		}
	}
	return stats, nil
}

// localIndex loads the checkpoint's local index; nil when there is none
// or it is damaged (logged), so every section is read remotely.
func (m *Mirror) localIndex(job string, ckpt uint64) *localIndex {
	if m.Local.closed.Load() {
		return nil
	}
	x, err := m.Local.readIndex(job, ckpt)
	switch {
	case err == nil:
		return x
	case errors.Is(err, ErrNotFound):
		return nil
	default:
		m.Log.Warn().Err(err).Str("job", job).Uint64("checkpoint", ckpt).
			Msg("local index damaged: ignoring it, reading the checkpoint store")
		return nil
	}
}
