package store

import (
	"fmt"
	"io"
	"path"
)

// sectionFiles reads sections of a checkpoint's local blob files, keeping
// each file open across sections; Close closes them all.
type sectionFiles struct {
	l     *Local
	job   string
	ckpt  uint64
	files map[string]File
}

// readInto returns the verified bytes ref names in its blob file: only the
// section is read, into buf when its capacity suffices, when the file can
// read at an offset (an *os.File can); otherwise the whole file is read
// into a new slice. A missing file wraps ErrNotFound, a section that does
// not match ref ErrCorrupt.
func (s *sectionFiles) readInto(ref BlobRef, buf []byte) ([]byte, error) {
	if err := ValidateBlobName(ref.Name); err != nil {
		return nil, err
	}
	f, ok := s.files[ref.Name]
	if !ok {
		var err error
		f, err = s.l.fs.Open(s.l.abs(path.Join(checkpointRel(s.job, s.ckpt), ref.Name)))
		if err != nil {
			return nil, fmt.Errorf("open local blob %q: %w: %w", ref.Name, ErrNotFound, err)
		}
		if s.files == nil {
			s.files = map[string]File{}
		}
		s.files[ref.Name] = f
	}
	ra, ok := f.(io.ReaderAt)
	if !ok || ref.Whole == 0 {
		delete(s.files, ref.Name) // read to the end: not reusable
		defer f.Close()
		data, err := io.ReadAll(f)
		if err != nil {
			return nil, fmt.Errorf("read local blob %q: %w", ref.Name, err)
		}
		if err := verifyBlob(s.job, s.ckpt, ref, data); err != nil {
			return nil, err
		}
		if ref.Whole > 0 {
			data = data[ref.Offset : ref.Offset+ref.Size]
		}
		return data, nil
	}
	if ref.Size < 0 || ref.Offset < 0 {
		return nil, fmt.Errorf("job %q checkpoint %d blob %q: section [%d, +%d): %w",
			s.job, s.ckpt, ref.Name, ref.Offset, ref.Size, ErrCorrupt)
	}
	data := buf[:0]
	if int64(cap(data)) < ref.Size {
		data = make([]byte, ref.Size)
	}
	data = data[:ref.Size]
	n, err := ra.ReadAt(data, ref.Offset)
	if n < len(data) {
		if err == nil || err == io.EOF {
			return nil, fmt.Errorf("job %q checkpoint %d blob %q: section [%d, +%d) cut short at %d bytes: %w",
				s.job, s.ckpt, ref.Name, ref.Offset, ref.Size, n, ErrCorrupt)
		}
		return nil, fmt.Errorf("read local blob %q: %w", ref.Name, err)
	}
	if got := Checksum(data); got != ref.CRC32C {
		return nil, fmt.Errorf("job %q checkpoint %d blob %q: section [%d, +%d) crc32c %08x, expected %08x: %w",
			s.job, s.ckpt, ref.Name, ref.Offset, ref.Size, got, ref.CRC32C, ErrCorrupt)
	}
	return data, nil
}

// Close closes the open files.
func (s *sectionFiles) Close() {
	for name, f := range s.files {
		f.Close()
		delete(s.files, name)
	}
}
