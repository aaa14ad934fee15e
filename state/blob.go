package state

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
)

// formatVersion is the first byte of every Backend blob that holds its
// key group whole; deltaVersion that of a delta on the group's previous
// state (delta.go).
const (
	formatVersion byte = 1
	deltaVersion  byte = 2
)

// crcLen is the size of the CRC-32C trailer of a Backend blob.
const crcLen = 4

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// blobEntry is one table's part of a Backend blob.
type blobEntry struct {
	name string
	kind Kind
	data []byte
	full bool // in a delta blob: data holds the table's group whole
}

// blobHeader is what a Backend blob says about where it belongs.
type blobHeader struct {
	group, maxParallelism int
	delta                 bool // a delta blob: tables it leaves out are unchanged
}

// encodeBlob writes version, msgpack [group, maxParallelism, {name: [kind,
// data]}] and the CRC. entries must be sorted by name. eb holds the framing
// only: each entry's data is copied once, straight into the blob.
func encodeBlob(eb *encBuf, h blobHeader, entries []blobEntry) ([]byte, error) {
	return appendBlob(nil, eb, h, entries)
}

// appendBlob is encodeBlob appending the blob to dst.
func appendBlob(dst []byte, eb *encBuf, h blobHeader, entries []blobEntry) ([]byte, error) {
	e := eb.reset()
	if err := encodeBlobHead(eb, h); err != nil {
		return nil, err
	}
	if err := e.EncodeMapLen(len(entries)); err != nil {
		return nil, err
	}
	// cuts[i] is where entry i's data goes in the framing.
	var cutsArr [4]int
	cuts := cutsArr[:0]
	size := 0
	for _, en := range entries {
		if err := encodeEntryHead(eb, h, en); err != nil {
			return nil, err
		}
		if err := encodeDataLen(eb, en.data); err != nil {
			return nil, err
		}
		cuts = append(cuts, eb.buf.Len())
		size += len(en.data)
	}
	frame := eb.buf.Bytes()
	start := len(dst)
	out := grow(dst, len(frame)+size+crcLen)
	from := 0
	for i, en := range entries {
		out = append(out, frame[from:cuts[i]]...)
		out = append(out, en.data...)
		from = cuts[i]
	}
	out = append(out, frame[from:]...)
	return binary.BigEndian.AppendUint32(out, crc32.Checksum(out[start:], castagnoli)), nil
}

// grow returns b with room for n more bytes: b itself when it has them,
// else a copy with exactly that room when b has no capacity (a blob of its
// own) and at least twice b's capacity otherwise (a buffer appended to
// group by group), so appending every group copies what came before a bounded
// number of times. Unlike slices.Grow it allocates once, race detector
// or not.
func grow(b []byte, n int) []byte {
	if cap(b)-len(b) >= n {
		return b
	}
	nb := make([]byte, len(b), max(len(b)+n, 2*cap(b)))
	copy(nb, b)
	return nb
}

// encodeBlobHead writes a blob's version byte and [group, maxParallelism,
// to eb (reset by the caller), up to its map of tables.
func encodeBlobHead(eb *encBuf, h blobHeader) error {
	if h.delta {
		eb.buf.WriteByte(deltaVersion)
	} else {
		eb.buf.WriteByte(formatVersion)
	}
	e := eb.enc
	if err := e.EncodeArrayLen(3); err != nil {
		return err
	}
	if err := e.EncodeInt(int64(h.group)); err != nil {
		return err
	}
	return e.EncodeInt(int64(h.maxParallelism))
}

// encodeEntryHead writes an entry's name and [kind, (full,) to eb, up to
// its data's bin header.
func encodeEntryHead(eb *encBuf, h blobHeader, en blobEntry) error {
	e := eb.enc
	fields := 2
	if h.delta {
		fields = 3
	}
	if err := e.EncodeString(en.name); err != nil {
		return err
	}
	if err := e.EncodeArrayLen(fields); err != nil {
		return err
	}
	if err := e.EncodeUint(uint64(en.kind)); err != nil {
		return err
	}
	if h.delta {
		return e.EncodeBool(en.full)
	}
	return nil
}

// encodeDataLen writes the bin header of an entry's data to eb: nil for
// none (as EncodeBytes(nil)).
func encodeDataLen(eb *encBuf, data []byte) error {
	if data == nil {
		return eb.enc.EncodeNil()
	}
	return eb.enc.EncodeBytesLen(len(data))
}

// sealedCRC is the CRC-32C of blob as appendBlob wrote it, trailer
// included, from its trailer alone: CRC(payload+trailer) is the payload's
// CRC, which the trailer holds, carried over the trailer
// (blobCRC.checkTrailer does the reverse).
func sealedCRC(blob []byte) uint32 {
	trailer := blob[len(blob)-crcLen:]
	return crc32.Update(binary.BigEndian.Uint32(trailer), castagnoli, trailer)
}

// blobCRC is what decodeBlob knows of a blob's CRC-32C as a whole.
type blobCRC struct {
	known bool   // the caller has checked the whole blob against sum
	sum   uint32 // CRC-32C of the whole blob, trailer included
}

// checkTrailer reports whether the trailer holds the CRC-32C of payload,
// where payload+trailer is the whole blob. Knowing the whole blob's CRC it
// takes four bytes' work: CRC(payload+trailer) is CRC(payload) carried over
// trailer, and carrying over four given bytes maps distinct CRCs to
// distinct CRCs, so the whole's CRC matches the trailer carried over itself
// exactly when the trailer is the payload's CRC.
func (c blobCRC) checkTrailer(payload, trailer []byte) (got, want uint32) {
	want = binary.BigEndian.Uint32(trailer)
	if c.known {
		if crc32.Update(want, castagnoli, trailer) == c.sum {
			return want, want
		}
		return ^want, want // not the payload's CRC; the actual one is not computed
	}
	return crc32.Checksum(payload, castagnoli), want
}

// decodeBlob checks version and CRC and parses a Backend blob. Table data in
// the entries aliases blob. Errors wrap ErrVersion or ErrCorrupt and do not
// name the group (the caller adds it).
func decodeBlob(blob []byte, crc blobCRC) (blobHeader, []blobEntry, error) {
	var h blobHeader
	if len(blob) == 0 {
		return h, nil, fmt.Errorf("%w: empty blob", ErrCorrupt)
	}
	if blob[0] != formatVersion && blob[0] != deltaVersion {
		return h, nil, fmt.Errorf("%w: version %d, want %d or %d", ErrVersion, blob[0], formatVersion, deltaVersion)
	}
	h.delta = blob[0] == deltaVersion
	fields := 2
	if h.delta {
		fields = 3
	}
	if len(blob) < 1+crcLen {
		return h, nil, fmt.Errorf("%w: %d bytes is too short", ErrCorrupt, len(blob))
	}
	payload, trailer := blob[:len(blob)-crcLen], blob[len(blob)-crcLen:]
	if got, want := crc.checkTrailer(payload, trailer); got != want {
		if crc.known {
			return h, nil, fmt.Errorf("%w: trailer checksum %08x is not that of the payload (blob crc32c %08x)", ErrCorrupt, want, crc.sum)
		}
		return h, nil, fmt.Errorf("%w: checksum %08x, want %08x", ErrCorrupt, got, want)
	}
	body := payload[1:]
	d := newDecoderOf(body, copyInput)
	r := d.r
	bad := func(what string, err error) (blobHeader, []blobEntry, error) {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return h, nil, fmt.Errorf("%w: %s: %w", ErrCorrupt, what, err)
	}
	if n, err := d.DecodeArrayLen(); err != nil || n != 3 {
		return bad("header", errOr(err, "array of %d, want 3", n))
	}
	var err error
	if h.group, err = d.DecodeInt(); err != nil {
		return bad("group", err)
	}
	if h.maxParallelism, err = d.DecodeInt(); err != nil {
		return bad("maxParallelism", err)
	}
	n, err := d.DecodeMapLen()
	if err == nil {
		err = d.checkLen(n)
	}
	if err != nil {
		return bad("table map", err)
	}
	entries := make([]blobEntry, 0, max(n, 0))
	seen := make(map[string]bool, max(n, 0))
	for range n {
		var en blobEntry
		if en.name, err = d.DecodeString(); err != nil {
			return bad("table name", err)
		}
		if seen[en.name] {
			return bad(fmt.Sprintf("table %q", en.name), errors.New("listed twice"))
		}
		seen[en.name] = true
		if k, err := d.DecodeArrayLen(); err != nil || k != fields {
			return bad(fmt.Sprintf("table %q", en.name), errOr(err, "array of %d, want %d", k, fields))
		}
		kind, err := d.DecodeUint8()
		if err != nil {
			return bad(fmt.Sprintf("table %q kind", en.name), err)
		}
		en.kind = Kind(kind)
		if h.delta {
			if en.full, err = d.DecodeBool(); err != nil {
				return bad(fmt.Sprintf("table %q whole", en.name), err)
			}
		}
		size, err := d.DecodeBytesLen()
		if err == nil {
			err = d.checkLen(size)
		}
		if err != nil {
			return bad(fmt.Sprintf("table %q data", en.name), err)
		}
		if size > 0 {
			off := len(body) - r.Len()
			en.data = body[off : off+size]
			if _, err := r.Seek(int64(size), io.SeekCurrent); err != nil {
				return bad(fmt.Sprintf("table %q data", en.name), err)
			}
		}
		entries = append(entries, en)
	}
	if r.Len() != 0 {
		return bad("end", fmt.Errorf("%d trailing bytes", r.Len()))
	}
	return h, entries, nil
}

// errOr returns err, or a new error from format when err is nil.
func errOr(err error, format string, args ...any) error {
	if err != nil {
		return err
	}
	return fmt.Errorf(format, args...)
}
