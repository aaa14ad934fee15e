package store

import (
	"context"
	"fmt"
	"hash/crc32"
)

// castagnoli is the CRC32C table used for blobs and manifests.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Checksum returns the CRC32C (Castagnoli) of data, as stored in BlobRef.
func Checksum(data []byte) uint32 {
	return crc32.Checksum(data, castagnoli)
}

// sectionedKey marks a context whose PutBlob stores a blob of which a
// manifest records only sections.
type sectionedKey struct{}

// Sectioned returns ctx for a PutBlob of a blob of which a manifest records
// only sections, each with its own checksum (Section, SectionSummed): the
// stores of this package then skip checksumming it whole, and the ref they
// return has no CRC32C (it verifies no read of the whole blob). A store
// that wraps another passes ctx on, so its own PutBlob still runs.
func Sectioned(ctx context.Context) context.Context {
	return context.WithValue(ctx, sectionedKey{}, true)
}

// blobRefFor is the ref PutBlob returns for data stored under name: with
// its checksum unless ctx is Sectioned.
func blobRefFor(ctx context.Context, name string, data []byte) BlobRef {
	if ctx.Value(sectionedKey{}) != nil {
		return BlobRef{Name: name, Size: int64(len(data))}
	}
	return newBlobRef(name, data)
}

// newBlobRef describes data stored under name.
func newBlobRef(name string, data []byte) BlobRef {
	return BlobRef{Name: name, Size: int64(len(data)), CRC32C: Checksum(data)}
}

// verifyBlob checks data read for ref and returns an error wrapping
// ErrCorrupt that names job, checkpoint and blob when it does not match.
func verifyBlob(job string, ckpt uint64, ref BlobRef, data []byte) error {
	if ref.Whole > 0 {
		if int64(len(data)) != ref.Whole {
			return fmt.Errorf("job %q checkpoint %d blob %q: size %d bytes, expected %d: %w",
				job, ckpt, ref.Name, len(data), ref.Whole, ErrCorrupt)
		}
		if ref.Offset < 0 || ref.Size < 0 || ref.Offset+ref.Size > ref.Whole {
			return fmt.Errorf("job %q checkpoint %d blob %q: section [%d, +%d) outside %d bytes: %w",
				job, ckpt, ref.Name, ref.Offset, ref.Size, ref.Whole, ErrCorrupt)
		}
		data = data[ref.Offset : ref.Offset+ref.Size]
	}
	if int64(len(data)) != ref.Size {
		return fmt.Errorf("job %q checkpoint %d blob %q: size %d bytes, expected %d: %w",
			job, ckpt, ref.Name, len(data), ref.Size, ErrCorrupt)
	}
	if got := Checksum(data); got != ref.CRC32C {
		return fmt.Errorf("job %q checkpoint %d blob %q: crc32c %08x, expected %08x: %w",
			job, ckpt, ref.Name, got, ref.CRC32C, ErrCorrupt)
	}
	return nil
}
