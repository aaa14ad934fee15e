package store

import (
	"context"
	"errors"
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
	idx := m.localIndex(job, ckpt)
	return m.readLocalFirst(ctx, job, ckpt, refsOf(secs), func(i int) (BlobRef, bool) {
		e, ok := idx.lookup(secs[i].Key)
		if !ok {
			return BlobRef{}, false
		}
		if e.Ref.Size != secs[i].Ref.Size || e.Ref.CRC32C != secs[i].Ref.CRC32C {
			secs[i].Key.logFields(m.Log.Warn().Str("job", job).Uint64("checkpoint", ckpt)).
				Int64("local_size", e.Ref.Size).Int64("size", secs[i].Ref.Size).
				Msg("local section is not the checkpoint's: reading the checkpoint store")
			return BlobRef{}, false
		}
		return e.Ref, true
	}, true, func(i int, e *zerolog.Event) *zerolog.Event { return secs[i].Key.logFields(e) })
}

// GetSections implements SectionReader, section by section: each ref from
// the local copy of its blob when that section verifies, else from the
// primary (the sections that failed, each object fetched once).
func (m *Mirror) GetSections(ctx context.Context, job string, ckpt uint64, refs []BlobRef) ([][]byte, error) {
	out, _, err := m.readLocalFirst(ctx, job, ckpt, refs, func(i int) (BlobRef, bool) { return refs[i], true }, false,
		func(i int, e *zerolog.Event) *zerolog.Event { return e.Str("blob", refs[i].Name) })
	return out, err
}

// readLocalFirst reads want[i] from the local section local(i) names, when
// there is one and it verifies, and the rest from the primary; describe adds
// log fields naming section i. A local section that does not verify is
// logged; so is a missing one when indexed (an index placed it there).
func (m *Mirror) readLocalFirst(ctx context.Context, job string, ckpt uint64, want []BlobRef,
	local func(i int) (BlobRef, bool), indexed bool, describe func(i int, e *zerolog.Event) *zerolog.Event) ([][]byte, ReadStats, error) {
	start := time.Now()
	var stats ReadStats
	out := make([][]byte, len(want))
	files := &sectionFiles{l: m.Local, job: job, ckpt: ckpt}
	defer files.Close()
	var remote []int
	for i := range want {
		if err := ctx.Err(); err != nil {
			return nil, stats, err
		}
		ref, ok := local(i)
		if ok && m.Local.closed.Load() {
			ok = false
		}
		if ok {
			data, err := files.read(ref)
			if err == nil {
				out[i] = data
				stats.LocalBytes += int64(len(data))
				stats.LocalSections++
				continue
			}
			if indexed || !errors.Is(err, ErrNotFound) {
				describe(i, m.Log.Warn().Err(err).Str("job", job).Uint64("checkpoint", ckpt)).
					Msg("local section damaged: reading it from the checkpoint store")
			}
		}
		remote = append(remote, i)
	}
	if len(remote) > 0 {
		refs := make([]BlobRef, len(remote))
		for j, i := range remote {
			refs[j] = want[i]
		}
		data, err := GetSections(ctx, m.Primary, job, ckpt, refs)
		if err != nil {
			stats.Took = time.Since(start)
			var se *SectionError
			if errors.As(err, &se) && se.Index < len(remote) {
				return nil, stats, &SectionError{Index: remote[se.Index], Err: se.Err}
			}
			return nil, stats, err
		}
		for j, i := range remote {
			out[i] = data[j]
			stats.RemoteBytes += int64(len(data[j]))
			stats.RemoteSections++
		}
	}
	stats.Took = time.Since(start)
	return out, stats, nil
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
