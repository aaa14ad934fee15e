package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"

	"github.com/vmihailenco/msgpack/v5"
)

// Manifest file format: a 16-byte header followed by the msgpack body.
//
//	offset size field
//	0      4    magic "WRMF"
//	4      2    version (big endian), currently 1
//	6      2    flags, must be 0
//	8      4    body length in bytes (big endian)
//	12     4    CRC32C of the body (big endian)
const (
	manifestMagic      = "WRMF"
	manifestVersion    = 1
	manifestHeaderSize = 16
	// maxManifestBody bounds the body length a header may claim.
	maxManifestBody = 1 << 30
)

// EncodeManifest serialises m with the verifying header. Go map order is
// not preserved, so equal manifests may encode to different bytes; compare
// decoded manifests instead.
func EncodeManifest(m *Manifest) ([]byte, error) {
	var body bytes.Buffer
	if err := msgpack.NewEncoder(&body).Encode(m); err != nil {
		return nil, fmt.Errorf("encode manifest of job %q checkpoint %d: %w", m.Job, m.CheckpointID, err)
	}
	out := make([]byte, manifestHeaderSize, manifestHeaderSize+body.Len())
	copy(out, manifestMagic)
	binary.BigEndian.PutUint16(out[4:], manifestVersion)
	binary.BigEndian.PutUint16(out[6:], 0)
	binary.BigEndian.PutUint32(out[8:], uint32(body.Len()))
	binary.BigEndian.PutUint32(out[12:], Checksum(body.Bytes()))
	return append(out, body.Bytes()...), nil
}

// DecodeManifest parses and verifies bytes written by EncodeManifest. Any
// torn, truncated or garbage input yields an error wrapping ErrCorrupt.
func DecodeManifest(data []byte) (*Manifest, error) {
	if len(data) < manifestHeaderSize {
		return nil, fmt.Errorf("manifest of %d bytes is shorter than its %d-byte header: %w",
			len(data), manifestHeaderSize, ErrCorrupt)
	}
	if string(data[:4]) != manifestMagic {
		return nil, fmt.Errorf("manifest magic %q, expected %q: %w", data[:4], manifestMagic, ErrCorrupt)
	}
	if v := binary.BigEndian.Uint16(data[4:]); v != manifestVersion {
		return nil, fmt.Errorf("manifest version %d, this build reads version %d: %w", v, manifestVersion, ErrCorrupt)
	}
	if f := binary.BigEndian.Uint16(data[6:]); f != 0 {
		return nil, fmt.Errorf("manifest flags %#04x, expected 0: %w", f, ErrCorrupt)
	}
	n := binary.BigEndian.Uint32(data[8:])
	body := data[manifestHeaderSize:]
	if n > maxManifestBody || int64(n) != int64(len(body)) {
		return nil, fmt.Errorf("manifest body is %d bytes, header says %d (torn write?): %w", len(body), n, ErrCorrupt)
	}
	if want, got := binary.BigEndian.Uint32(data[12:]), Checksum(body); got != want {
		return nil, fmt.Errorf("manifest body crc32c %08x, expected %08x: %w", got, want, ErrCorrupt)
	}
	r := bytes.NewReader(body)
	var m Manifest
	if err := msgpack.NewDecoder(r).Decode(&m); err != nil {
		return nil, fmt.Errorf("decode manifest body: %v: %w", err, ErrCorrupt)
	}
	if r.Len() != 0 {
		return nil, fmt.Errorf("manifest body has %d trailing bytes: %w", r.Len(), ErrCorrupt)
	}
	return &m, nil
}

// validateManifest checks a manifest before it is committed: its job name and
// every blob name it references must be valid.
func validateManifest(m *Manifest) error {
	if m == nil {
		return errors.New("commit manifest: nil manifest")
	}
	if err := ValidateJob(m.Job); err != nil {
		return fmt.Errorf("commit manifest of checkpoint %d: %w", m.CheckpointID, err)
	}
	for i := range m.Tasks {
		t := &m.Tasks[i]
		check := func(ref BlobRef) error {
			if err := ValidateBlobName(ref.Name); err != nil {
				return fmt.Errorf("commit manifest of job %q checkpoint %d: task %s/%d: %w",
					m.Job, m.CheckpointID, t.Operator, t.Instance, err)
			}
			return nil
		}
		for _, ref := range t.KeyGroups {
			if err := check(ref); err != nil {
				return err
			}
		}
		if t.OperatorState != nil {
			if err := check(*t.OperatorState); err != nil {
				return err
			}
		}
		for _, c := range t.Channels {
			if err := check(c.Blob); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkManifestIdentity verifies that a decoded manifest belongs where it
// was found.
func checkManifestIdentity(m *Manifest, job string, ckpt uint64) error {
	if m.Job != job || m.CheckpointID != ckpt {
		return fmt.Errorf("manifest names job %q checkpoint %d: %w", m.Job, m.CheckpointID, ErrCorrupt)
	}
	return nil
}

// compareCommitted decides what committing encoded (the encoding of a
// manifest for job/ckpt) over the stored bytes old means: same is true when
// old is that very manifest (an idempotent retry), conflict when old is a
// different valid manifest. A corrupt old manifest is neither: the
// checkpoint does not exist and may be committed.
func compareCommitted(job string, ckpt uint64, old, encoded []byte) (same, conflict bool) {
	if bytes.Equal(old, encoded) {
		return true, false
	}
	prev, err := decodeManifestFor(job, ckpt, old)
	if err != nil {
		return false, false
	}
	next, err := DecodeManifest(encoded)
	if err != nil {
		return false, false
	}
	if reflect.DeepEqual(prev, next) {
		return true, false
	}
	return false, true
}
