package node

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// workdirOwnerFile names, in a workdir, the node id that owns it.
const workdirOwnerFile = "node-id"

// claimWorkdir makes workdir the node id's: a node whose id differs from
// the one recorded there adopts nothing of it (its local state is another
// node's, reported and restored under that node's id) and does not start.
// A workdir without a record is claimed.
func claimWorkdir(workdir, id string) error {
	if err := os.MkdirAll(workdir, 0o755); err != nil {
		return fmt.Errorf("node workdir: %w", err)
	}
	path := filepath.Join(workdir, workdirOwnerFile)
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		if owner := strings.TrimSpace(string(b)); owner != id {
			return fmt.Errorf("workdir %s belongs to node %q, not %q: start that node with --id %s, or this one with its own --workdir",
				workdir, owner, id, owner)
		}
		return nil
	case !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("node workdir owner: %w", err)
	}
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("node workdir owner: %w", err)
	}
	_, err = f.WriteString(id + "\n")
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		return fmt.Errorf("node workdir owner: %w", err)
	}
	return nil
}
