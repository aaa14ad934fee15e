package transport

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"time"
)

// inspectKeyOrder is the order of the keys in an Inspect line; other keys
// follow, sorted.
var inspectKeyOrder = []string{
	"subject", "type", "job", "channel", "from", "to", "seq", "checkpoint", "gen",
	"records", "first", "body", "bytes", "error", "headers",
}

// writeJSONLine writes d as one JSON object with keys in inspectKeyOrder.
// A value that cannot be encoded is replaced by an error string.
func writeJSONLine(w io.Writer, d map[string]any) error {
	keys := make([]string, 0, len(d))
	for k := range d {
		keys = append(keys, k)
	}
	rank := func(k string) int {
		if i := slices.Index(inspectKeyOrder, k); i >= 0 {
			return i
		}
		return len(inspectKeyOrder)
	}
	slices.SortFunc(keys, func(a, b string) int {
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra - rb
		}
		if a < b {
			return -1
		}
		return 1
	})
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			buf.WriteByte(',')
		}
		kb, _ := json.Marshal(k) // a string always encodes
		vb, err := json.Marshal(d[k])
		if err != nil {
			vb, _ = json.Marshal(fmt.Sprintf("unencodable: %v", err))
		}
		buf.Write(kb)
		buf.WriteByte(':')
		buf.Write(vb)
	}
	buf.WriteString("}\n")
	_, err := w.Write(buf.Bytes())
	return err
}

// jsonSafe converts a generically decoded msgpack value into one that
// encoding/json accepts: non-finite floats become strings, maps with
// non-string keys get fmt.Sprint keys. Recursion depth is bounded by
// CheckMsgpack's nesting limit.
func jsonSafe(v any) any {
	switch x := v.(type) {
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Sprint(x)
		}
	case float32:
		if f := float64(x); math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Sprint(x)
		}
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = jsonSafe(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = jsonSafe(e)
		}
		return out
	case map[any]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[fmt.Sprint(k)] = jsonSafe(e)
		}
		return out
	case time.Time:
		return x.UTC().Format(time.RFC3339Nano)
	}
	return v
}
