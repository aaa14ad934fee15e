package jetstream

import (
	"encoding/json"
	"fmt"
)

// decodeDefault decodes a message payload into T: a []byte record is the
// payload itself, anything else is JSON.
func decodeDefault[T any](data []byte) (T, error) {
	var v T
	if b, ok := any(&v).(*[]byte); ok {
		*b = append([]byte(nil), data...)
		return v, nil
	}
	if err := json.Unmarshal(data, &v); err != nil {
		return v, fmt.Errorf("decode %T from JSON: %w", v, err)
	}
	return v, nil
}

// encodeDefault encodes a record as a payload: a []byte record as it is,
// anything else as JSON.
func encodeDefault[T any](v T) ([]byte, error) {
	if b, ok := any(v).([]byte); ok {
		return append([]byte(nil), b...), nil // held until the checkpoint commits
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode %T as JSON: %w", v, err)
	}
	return b, nil
}
