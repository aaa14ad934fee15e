package store

import (
	"bytes"
	"cmp"
	"context"
	"slices"
)

// EachSectionKept is EachSection where fn may keep data after it returns:
// every section comes in bytes that no one else writes and that no other
// section handed to fn overlaps (a Mirror reads each local section into a
// new buffer instead of reusing one; sections read remotely share the
// buffer of their object with its other sections, which do not overlap; a
// section that overlaps an earlier one of secs in its object is handed
// over as a copy). A
// restore lets the state it decodes point into them instead of copying
// each key and value. The caller holds only what it keeps.
func EachSectionKept(ctx context.Context, st Store, job string, ckpt uint64, secs []SectionRequest, fn func(i int, data []byte) error) (ReadStats, error) {
	shared := overlapping(secs)
	kept := func(i int, data []byte) error {
		if shared[i] {
			data = bytes.Clone(data)
		}
		return fn(i, data)
	}
	if m, ok := st.(*Mirror); ok {
		return m.eachSection(ctx, job, ckpt, secs, false, kept)
	}
	return EachSection(ctx, st, job, ckpt, secs, kept)
}

// overlapping marks the sections to copy so that no two sections handed
// over share bytes: of sections that overlap in their object (the same
// section asked for twice, or a whole object and a section of it) all but
// the first by offset.
func overlapping(secs []SectionRequest) []bool {
	type span struct {
		name       string
		start, end int64
		i          int
	}
	spans := make([]span, len(secs))
	for i, s := range secs {
		start := int64(0)
		if s.Ref.Whole > 0 {
			start = s.Ref.Offset
		}
		spans[i] = span{s.Ref.Name, start, start + s.Ref.Size, i}
	}
	slices.SortFunc(spans, func(a, b span) int {
		return cmp.Or(cmp.Compare(a.name, b.name), cmp.Compare(a.start, b.start))
	})
	shared := make([]bool, len(secs))
	var reach int64 // the furthest end of the earlier spans of the same object
	for j, sp := range spans {
		if j == 0 || sp.name != spans[j-1].name {
			reach = 0
		}
		shared[sp.i] = sp.start < reach
		reach = max(reach, sp.end)
	}
	return shared
}
