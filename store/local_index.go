package store

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"

	"github.com/vmihailenco/msgpack/v5"
)

// Local state index: per checkpoint this node holds a copy of, which section
// (SectionKey) lies where in the local blob files. It is a frame (see
// frame.go) with magic "WRLI", version 1, around the msgpack body, stored
// as <job>/chk-<id>/_local_index and written after the blobs it points
// into (temp, fsync, rename, directory fsync).
const (
	localIndexName    = "_local_index"
	localIndexMagic   = "WRLI"
	localIndexVersion = 1
)

// localIndex is the decoded index of one checkpoint.
type localIndex struct {
	Job        string       `msgpack:"job"`
	Checkpoint uint64       `msgpack:"checkpoint"`
	Sections   []indexEntry `msgpack:"sections"`
}

// indexEntry places one section: Ref names the local blob file (Name), the
// section's Offset and Size in it, its CRC32C and the file's size (Whole).
// A key group's delta of an incremental checkpoint also carries the earlier
// links of its chain (Chain, oldest first), whose sections are in the
// indexes of their own checkpoints: the group's state is all of them.
type indexEntry struct {
	Key   SectionKey  `msgpack:"key"`
	Ref   BlobRef     `msgpack:"ref"`
	Chain []ChainLink `msgpack:"chain,omitempty"`
}

// lookup returns the entry of key.
func (x *localIndex) lookup(key SectionKey) (indexEntry, bool) {
	if x == nil {
		return indexEntry{}, false
	}
	i := sort.Search(len(x.Sections), func(i int) bool { return !keyLess(x.Sections[i].Key, key) })
	if i < len(x.Sections) && x.Sections[i].Key == key {
		return x.Sections[i], true
	}
	return indexEntry{}, false
}

// merge adds entries, replacing any of the same key, and keeps the
// sections sorted by key.
func (x *localIndex) merge(entries []indexEntry) {
	byKey := make(map[SectionKey]int, len(x.Sections))
	for i, e := range x.Sections {
		byKey[e.Key] = i
	}
	for _, e := range entries {
		if i, ok := byKey[e.Key]; ok {
			x.Sections[i] = e
			continue
		}
		byKey[e.Key] = len(x.Sections)
		x.Sections = append(x.Sections, e)
	}
	sort.Slice(x.Sections, func(i, j int) bool { return keyLess(x.Sections[i].Key, x.Sections[j].Key) })
}

// keyLess orders section keys by operator, kind, key group, instance, input.
func keyLess(a, b SectionKey) bool {
	switch {
	case a.Operator != b.Operator:
		return a.Operator < b.Operator
	case a.Kind != b.Kind:
		return a.Kind < b.Kind
	case a.KeyGroup != b.KeyGroup:
		return a.KeyGroup < b.KeyGroup
	case a.Instance != b.Instance:
		return a.Instance < b.Instance
	}
	return a.Input < b.Input
}

// encodeLocalIndex serialises x with the verifying header.
func encodeLocalIndex(x *localIndex) ([]byte, error) {
	var body bytes.Buffer
	if err := msgpack.NewEncoder(&body).Encode(x); err != nil {
		return nil, fmt.Errorf("encode local index of job %q checkpoint %d: %w", x.Job, x.Checkpoint, err)
	}
	return encodeFrame(localIndexMagic, localIndexVersion, body.Bytes()), nil
}

// decodeLocalIndex parses and verifies an index found at job/ckpt: header,
// checksum, identity and that every entry names a valid blob and a section
// inside it. Any failure wraps ErrCorrupt.
func decodeLocalIndex(job string, ckpt uint64, data []byte) (*localIndex, error) {
	body, err := decodeFrame("local index", localIndexMagic, localIndexVersion, data)
	if err != nil {
		return nil, err
	}
	r := bytes.NewReader(body)
	var x localIndex
	if err := msgpack.NewDecoder(r).Decode(&x); err != nil {
		return nil, fmt.Errorf("decode local index body: %v: %w", err, ErrCorrupt)
	}
	if r.Len() != 0 {
		return nil, fmt.Errorf("local index body has %d trailing bytes: %w", r.Len(), ErrCorrupt)
	}
	if x.Job != job || x.Checkpoint != ckpt {
		return nil, fmt.Errorf("local index names job %q checkpoint %d: %w", x.Job, x.Checkpoint, ErrCorrupt)
	}
	for i, e := range x.Sections {
		ref := e.Ref
		if err := ValidateBlobName(ref.Name); err != nil {
			return nil, fmt.Errorf("local index entry %d (%s): %v: %w", i, e.Key, err, ErrCorrupt)
		}
		if ref.Offset < 0 || ref.Size < 0 || (ref.Whole > 0 && ref.Whole < ref.Offset+ref.Size) || (ref.Whole == 0 && ref.Offset != 0) {
			return nil, fmt.Errorf("local index entry %d (%s): section [%d, +%d) outside %d bytes: %w",
				i, e.Key, ref.Offset, ref.Size, ref.Whole, ErrCorrupt)
		}
		if err := checkEarlierLinks(ckpt, e.Chain); err != nil {
			return nil, fmt.Errorf("local index entry %d (%s): %v: %w", i, e.Key, err, ErrCorrupt)
		}
		if i > 0 && !keyLess(x.Sections[i-1].Key, e.Key) {
			return nil, fmt.Errorf("local index entry %d (%s): out of order or repeated: %w", i, e.Key, ErrCorrupt)
		}
	}
	return &x, nil
}

// checkEarlierLinks checks the earlier links of a chain whose last link
// checkpoint ckpt wrote: valid blob names, written by ascending checkpoints
// before ckpt.
func checkEarlierLinks(ckpt uint64, links []ChainLink) error {
	var prev uint64
	for i, l := range links {
		if err := ValidateBlobName(l.Ref.Name); err != nil {
			return fmt.Errorf("chain link %d: %w", i, err)
		}
		if l.Checkpoint <= prev || l.Checkpoint >= ckpt {
			return fmt.Errorf("chain link %d written by checkpoint %d, after %d, before %d", i, l.Checkpoint, prev, ckpt)
		}
		prev = l.Checkpoint
	}
	return nil
}

// indexPath is the file of a checkpoint's local index.
func (l *Local) indexPath(job string, ckpt uint64) string {
	return l.abs(path.Join(checkpointRel(job, ckpt), localIndexName))
}

// readIndex reads and verifies the local index of a checkpoint. A missing
// index wraps ErrNotFound, a damaged one ErrCorrupt.
func (l *Local) readIndex(job string, ckpt uint64) (*localIndex, error) {
	if err := ValidateJob(job); err != nil {
		return nil, err
	}
	data, err := l.readFile(l.indexPath(job, ckpt))
	if err != nil {
		return nil, fmt.Errorf("local index of job %q checkpoint %d: %w", job, ckpt, err)
	}
	x, err := decodeLocalIndex(job, ckpt, data)
	if err != nil {
		return nil, fmt.Errorf("local index of job %q checkpoint %d: %w", job, ckpt, err)
	}
	return x, nil
}

// writeIndex makes x the durable index of its checkpoint (temp, fsync,
// rename, directory fsync). It does not create the checkpoint directory: a
// checkpoint with no directory wraps ErrNotFound.
func (l *Local) writeIndex(x *localIndex) error {
	if err := ValidateJob(x.Job); err != nil {
		return err
	}
	data, err := encodeLocalIndex(x)
	if err != nil {
		return err
	}
	// The index goes next to the blobs it places; with no checkpoint
	// directory (deleted meanwhile) there is nothing to index.
	if _, err := l.fs.Stat(l.abs(checkpointRel(x.Job, x.Checkpoint))); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("write local index of job %q checkpoint %d: %w", x.Job, x.Checkpoint, ErrNotFound)
		}
		return fmt.Errorf("write local index of job %q checkpoint %d: %w", x.Job, x.Checkpoint, err)
	}
	if err := l.writeFileAtomic(l.indexPath(x.Job, x.Checkpoint), data); err != nil {
		return fmt.Errorf("write local index of job %q checkpoint %d: %w", x.Job, x.Checkpoint, err)
	}
	return nil
}
