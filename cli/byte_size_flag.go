package cli

import (
	"fmt"
	"strconv"
	"strings"
)

// byteSize is a flag value in bytes written as a number with an optional
// unit: 65536, 64kB, 64MB, 2GB (powers of 1000) or 64KiB, 64MiB, 2GiB
// (powers of 1024).
type byteSize int64

// byteUnits are the accepted units, longest first.
var byteUnits = []struct {
	suffix string
	factor int64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30},
	{"kB", 1000}, {"KB", 1000}, {"MB", 1000 * 1000}, {"GB", 1000 * 1000 * 1000},
	{"B", 1},
}

// String prints the size in bytes.
func (b *byteSize) String() string { return strconv.FormatInt(int64(*b), 10) }

// Set parses a size such as 64MB.
func (b *byteSize) Set(s string) error {
	s = strings.TrimSpace(s)
	factor := int64(1)
	for _, u := range byteUnits {
		if strings.HasSuffix(s, u.suffix) {
			s, factor = strings.TrimSpace(strings.TrimSuffix(s, u.suffix)), u.factor
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || n > (1<<62)/factor {
		return fmt.Errorf("want a size such as 65536, 64MB or 64MiB")
	}
	*b = byteSize(n * factor)
	return nil
}
