package store

import (
	"encoding/binary"
	"fmt"
)

// Framed file format shared by manifests and local state indexes: a 16-byte
// header followed by the body.
//
//	offset size field
//	0      4    magic
//	4      2    version (big endian)
//	6      2    flags, must be 0
//	8      4    body length in bytes (big endian)
//	12     4    CRC32C of the body (big endian)
const (
	frameHeaderSize = 16
	// maxFrameBody bounds the body length a header may claim.
	maxFrameBody = 1 << 30
)

// encodeFrame puts the verifying header in front of body.
func encodeFrame(magic string, version uint16, body []byte) []byte {
	out := make([]byte, frameHeaderSize, frameHeaderSize+len(body))
	copy(out, magic)
	binary.BigEndian.PutUint16(out[4:], version)
	binary.BigEndian.PutUint16(out[6:], 0)
	binary.BigEndian.PutUint32(out[8:], uint32(len(body)))
	binary.BigEndian.PutUint32(out[12:], Checksum(body))
	return append(out, body...)
}

// decodeFrame verifies the header of data written by encodeFrame and returns
// the body. Torn, truncated or garbage input yields an error wrapping
// ErrCorrupt that starts with what (e.g. "manifest").
func decodeFrame(what, magic string, version uint16, data []byte) ([]byte, error) {
	if len(data) < frameHeaderSize {
		return nil, fmt.Errorf("%s of %d bytes is shorter than its %d-byte header: %w",
			what, len(data), frameHeaderSize, ErrCorrupt)
	}
	if string(data[:4]) != magic {
		return nil, fmt.Errorf("%s magic %q, expected %q: %w", what, data[:4], magic, ErrCorrupt)
	}
	if v := binary.BigEndian.Uint16(data[4:]); v != version {
		return nil, fmt.Errorf("%s version %d, this build reads version %d: %w", what, v, version, ErrCorrupt)
	}
	if f := binary.BigEndian.Uint16(data[6:]); f != 0 {
		return nil, fmt.Errorf("%s flags %#04x, expected 0: %w", what, f, ErrCorrupt)
	}
	n := binary.BigEndian.Uint32(data[8:])
	body := data[frameHeaderSize:]
	if n > maxFrameBody || int64(n) != int64(len(body)) {
		return nil, fmt.Errorf("%s body is %d bytes, header says %d (torn write?): %w", what, len(body), n, ErrCorrupt)
	}
	if want, got := binary.BigEndian.Uint32(data[12:]), Checksum(body); got != want {
		return nil, fmt.Errorf("%s body crc32c %08x, expected %08x: %w", what, got, want, ErrCorrupt)
	}
	return body, nil
}
