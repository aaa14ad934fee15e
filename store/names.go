package store

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

const (
	// manifestName is the reserved name of a checkpoint's manifest inside
	// its checkpoint directory or object prefix.
	manifestName = "_manifest"
	// checkpointPrefix starts every checkpoint directory or object prefix.
	checkpointPrefix = "chk-"
	// checkpointDigits is the zero-padded width of a checkpoint id, so that
	// lexical and numeric order agree.
	checkpointDigits = 20
	maxSegmentLen    = 255
	maxBlobNameLen   = 1024
)

// ValidateJob checks that job can name a job in every store: one non-empty
// path segment without "/", "\", control characters or a leading ".".
func ValidateJob(job string) error {
	if err := validateSegment(job); err != nil {
		return fmt.Errorf("job name %q: %w", job, err)
	}
	return nil
}

// ValidateBlobName checks that name can name a blob: "/"-separated segments,
// none empty, "." or "..", none starting with "." (reserved for temporary
// files), no leading "/" and not the reserved manifest name.
func ValidateBlobName(name string) error {
	if name == "" {
		return fmt.Errorf("blob name is empty: %w", ErrInvalidName)
	}
	if len(name) > maxBlobNameLen {
		return fmt.Errorf("blob name %.40q...: longer than %d bytes: %w", name, maxBlobNameLen, ErrInvalidName)
	}
	if name == manifestName || name == localIndexName {
		return fmt.Errorf("blob name %q is reserved: %w", name, ErrInvalidName)
	}
	for _, seg := range strings.Split(name, "/") {
		if err := validateSegment(seg); err != nil {
			return fmt.Errorf("blob name %q: %w", name, err)
		}
	}
	return nil
}

// validateSegment checks one path segment of a job or blob name.
func validateSegment(seg string) error {
	switch {
	case seg == "":
		return fmt.Errorf("empty segment: %w", ErrInvalidName)
	case seg == "." || seg == "..":
		return fmt.Errorf("segment %q not allowed: %w", seg, ErrInvalidName)
	case seg[0] == '.':
		return fmt.Errorf("segment %q starts with '.' (reserved): %w", seg, ErrInvalidName)
	case len(seg) > maxSegmentLen:
		return fmt.Errorf("segment longer than %d bytes: %w", maxSegmentLen, ErrInvalidName)
	case !utf8.ValidString(seg):
		return fmt.Errorf("segment %q is not valid UTF-8: %w", seg, ErrInvalidName)
	}
	for _, r := range seg {
		if r == '/' || r == '\\' || unicode.IsControl(r) {
			return fmt.Errorf("segment %q contains %q: %w", seg, r, ErrInvalidName)
		}
	}
	return nil
}

// checkpointDir returns the directory or object prefix of checkpoint ckpt,
// e.g. "chk-00000000000000000042".
func checkpointDir(ckpt uint64) string {
	return fmt.Sprintf("%s%0*d", checkpointPrefix, checkpointDigits, ckpt)
}

// parseCheckpointDir is the inverse of checkpointDir; ok is false for any
// other name.
func parseCheckpointDir(s string) (uint64, bool) {
	digits, found := strings.CutPrefix(s, checkpointPrefix)
	if !found || len(digits) != checkpointDigits {
		return 0, false
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return 0, false
		}
	}
	id, err := strconv.ParseUint(digits, 10, 64)
	if err != nil {
		return 0, false
	}
	return id, true
}
