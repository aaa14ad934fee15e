package store

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"

	"github.com/vmihailenco/msgpack/v5"
)

// Manifest file format: a frame (see frame.go) with magic "WRMF", version 1,
// around the msgpack body.
const (
	manifestMagic   = "WRMF"
	manifestVersion = 1
)

// EncodeManifest serialises m with the verifying header. Go map order is
// not preserved, so equal manifests may encode to different bytes; compare
// decoded manifests instead.
func EncodeManifest(m *Manifest) ([]byte, error) {
	var body bytes.Buffer
	if err := msgpack.NewEncoder(&body).Encode(m); err != nil {
		return nil, fmt.Errorf("encode manifest of job %q checkpoint %d: %w", m.Job, m.CheckpointID, err)
	}
	return encodeFrame(manifestMagic, manifestVersion, body.Bytes()), nil
}

// DecodeManifest parses and verifies bytes written by EncodeManifest. Any
// torn, truncated or garbage input yields an error wrapping ErrCorrupt.
func DecodeManifest(data []byte) (*Manifest, error) {
	body, err := decodeFrame("manifest", manifestMagic, manifestVersion, data)
	if err != nil {
		return nil, err
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
		for g, chain := range t.KeyGroupChains {
			if err := checkChain(m, g, chain); err != nil {
				return fmt.Errorf("commit manifest of job %q checkpoint %d: task %s/%d: %w",
					m.Job, m.CheckpointID, t.Operator, t.Instance, err)
			}
		}
		if t.OperatorState != nil {
			if err := check(*t.OperatorState); err != nil {
				return err
			}
		}
		for _, c := range t.Channels {
			if err := checkChannelParts(m, c); err != nil {
				return fmt.Errorf("commit manifest of job %q checkpoint %d: task %s/%d: %w",
					m.Job, m.CheckpointID, t.Operator, t.Instance, err)
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
