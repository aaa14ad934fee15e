package weir

import (
	"fmt"
	"os"
)

// TruncateOutput empties (or creates) a job's output file so a fresh run
// does not append to an old one.
func TruncateOutput(path string) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("truncate output file: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("truncate output file: %w", err)
	}
	return nil
}
