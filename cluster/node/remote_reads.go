package node

import (
	"context"

	"github.com/weirstream/weir/store"
)

// remoteReads is a node's checkpoint store with local recovery off
// (--local-recovery=false): the node still keeps its copy in the workdir
// (written, indexed, pruned and reported as before, so a later start with
// local recovery on finds it), but every restore reads the primary store
// and is counted as remote.
type remoteReads struct {
	*store.Mirror
}

// ReadSections implements store.LocalFirstReader: all from the primary.
func (r remoteReads) ReadSections(ctx context.Context, job string, ckpt uint64, secs []store.SectionRequest) ([][]byte, store.ReadStats, error) {
	return store.ReadSections(ctx, r.Primary, job, ckpt, secs)
}

// GetSections implements store.SectionReader: all from the primary.
func (r remoteReads) GetSections(ctx context.Context, job string, ckpt uint64, refs []store.BlobRef) ([][]byte, error) {
	return store.GetSections(ctx, r.Primary, job, ckpt, refs)
}

// GetBlob implements store.Store: from the primary.
func (r remoteReads) GetBlob(ctx context.Context, job string, ckpt uint64, ref store.BlobRef) ([]byte, error) {
	return r.Primary.GetBlob(ctx, job, ckpt, ref)
}
