package state

import (
	"encoding/binary"
	"hash/crc32"
	"unsafe"
)

// maxInPlaceTables is the most tables a blob encoded in place may have: its
// map of tables then has a one-byte header, written before the count is
// known and set at the end.
const maxInPlaceTables = 15

// binHeaderRoom is the room left for a part's msgpack bin header before the
// part is encoded in place: a bin 32 header, which a part of 64 KiB or
// more takes exactly.
const binHeaderRoom = 5

// encodeTablesInPlace is encodeTables appending to dst, each frozen table's
// part encoded straight into dst after the framing written so far instead
// of into the table's scratch and then copied: about the state's size
// copied less per snapshot. The framing before a part is written once the
// part's size is known, into binHeaderRoom bytes left for its bin header;
// a part under 64 KiB takes fewer and is moved back to meet its header.
// The blob is the one encodeTables makes, byte for byte. A part encoded
// elsewhere (a table whose encoder does not append to its scratch, dst
// short of room) is copied in. The caller has at most maxInPlaceTables
// tables.
func (s *AsyncSnapshot) encodeTablesInPlace(dst []byte, g int, sc *snapScratch, delta bool) ([]byte, groupSums, error) {
	start := len(dst)
	h := blobHeader{group: g, maxParallelism: s.maxParallelism, delta: delta}
	sc.blob.reset()
	if err := encodeBlobHead(&sc.blob, h); err != nil {
		return dst[:start], groupSums{}, err
	}
	dst = append(dst, sc.blob.buf.Bytes()...)
	mapAt := len(dst)
	dst = appendMapLen(dst, 0) // one byte: set once the parts are counted
	parts, count := 0, 0
	for i, ft := range s.tables {
		full := true
		var dk *deltaKeys
		if ft.encode != nil && delta {
			keys := s.changes.keys(ft.index, g)
			if len(keys) == 0 {
				continue // unchanged
			}
			if !s.encodedAt(g) { // one still encoded is written whole
				full, dk = false, &deltaKeys{keys: keys}
			}
		}
		// The part's framing but its bin header.
		sc.blob.reset()
		if err := encodeEntryHead(&sc.blob, h, blobEntry{name: ft.name, kind: ft.kind, full: full}); err != nil {
			return dst[:start], groupSums{}, err
		}
		partAt := len(dst)
		dst = append(dst, sc.blob.buf.Bytes()...)
		headerAt := len(dst)
		dataAt := headerAt + binHeaderRoom
		var data []byte
		if ft.encode == nil {
			data = ft.pre[g]
			if count >= 0 {
				count += ft.preLen[g]
			}
		} else {
			eb := sc.table(i)
			// Room for as much as the scratch last held: the part is
			// appended to dst's spare capacity through eb.raw.
			dst = grow(dst, binHeaderRoom+cap(eb.raw))[:dataAt]
			scratch := eb.raw
			eb.raw = dst[dataAt:dataAt]
			var err error
			data, err = ft.encode(g, eb, dk)
			if grown := eb.raw; cap(grown) > cap(scratch) && !startsAt(grown, dst, dataAt) {
				scratch = grown // the part outgrew dst's room: keep what it grew for the next
			}
			eb.raw = scratch[:0]
			if err != nil {
				return dst[:start], groupSums{}, err
			}
			count = addEntries(count, data)
		}
		if len(data) == 0 && !delta {
			dst = dst[:partAt] // left out, as encodeTables does
			continue
		}
		parts++
		sc.blob.reset()
		if err := encodeDataLen(&sc.blob, data); err != nil {
			return dst[:start], groupSums{}, err
		}
		header := sc.blob.buf.Bytes()
		if len(data) > 0 && startsAt(data, dst, dataAt) {
			// In place: a header shorter than the room left moves the part
			// back to meet it.
			dst = dst[:dataAt+len(data)]
			if len(header) < binHeaderRoom {
				copy(dst[headerAt+len(header):], dst[dataAt:])
				dst = dst[:headerAt+len(header)+len(data)]
			}
			copy(dst[headerAt:], header)
			continue
		}
		// Encoded elsewhere: copied in. The header ends before dataAt, so
		// it never overwrites a part left in dst's spare capacity.
		dst = append(append(dst[:headerAt], header...), data...)
	}
	dst[mapAt] = appendMapLen(nil, parts)[0] // parts ≤ maxInPlaceTables: one byte
	dst = binary.BigEndian.AppendUint32(dst, crc32.Checksum(dst[start:], castagnoli))
	return dst, groupSums{entries: count, crc: sealedCRC(dst[start:])}, nil
}

// startsAt reports whether b, empty or not, starts at dst[at], within dst's
// capacity.
func startsAt(b, dst []byte, at int) bool {
	return at < cap(dst) && unsafe.SliceData(b) == &dst[:at+1][at]
}
