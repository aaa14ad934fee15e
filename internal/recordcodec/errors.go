package recordcodec

import (
	"errors"
	"fmt"
)

var (
	// errTruncated reports input that ends inside a value.
	errTruncated = errors.New("unexpected end of data")
	// errMalformed reports input that is not msgpack at all.
	errMalformed = errors.New("malformed msgpack")
	// errSlow is returned by the compiled decoders for input they do not
	// handle themselves; DecodeBatch then hands the whole batch to the
	// library. It never reaches the caller.
	errSlow = errors.New("not on the fast path")
)

// errTooLong reports a length no msgpack header can carry.
func errTooLong(l int) error {
	return fmt.Errorf("length %d does not fit in a msgpack 32-bit header", l)
}

// fieldError tells which field, possibly nested ("outer.inner"), a decode
// error happened in.
type fieldError struct {
	path string
	err  error
}

func (e *fieldError) Error() string { return fmt.Sprintf("field %q: %v", e.path, e.err) }
func (e *fieldError) Unwrap() error { return e.err }

// inField wraps err with the field it happened in, joining nested paths. The
// errSlow signal passes through unwrapped.
func inField(name string, err error) error {
	if err == errSlow {
		return err
	}
	var fe *fieldError
	if errors.As(err, &fe) {
		return &fieldError{path: name + "." + fe.path, err: fe.err}
	}
	return &fieldError{path: name, err: err}
}
