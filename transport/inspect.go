package transport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/nats-io/nats.go"
	"github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"
)

// Inspect subscribes to subject (AllWildcard when empty) and writes one JSON
// line per message to w, as described by DescribeMsg (a message sent in
// parts once, joined, with "parts"; see describeJoined), until ctx is done; it
// then returns nil. It returns an error if it cannot subscribe, cannot
// write, or the connection closes. Messages dropped because w is too slow
// are reported as an "error" line and inspection goes on.
func Inspect(ctx context.Context, nc *nats.Conn, subject string, w io.Writer, maxRecords int) error {
	if subject == "" {
		subject = AllWildcard
	}
	sub, err := nc.SubscribeSync(subject)
	if err != nil {
		return fmt.Errorf("inspect %q: %w", subject, err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	if err := sub.SetPendingLimits(PendingMsgsLimit, PendingBytesLimit); err != nil {
		return fmt.Errorf("inspect %q: pending limits: %w", subject, err)
	}
	var parts partJoiner
	for {
		m, err := sub.NextMsgWithContext(ctx)
		var line map[string]any
		switch {
		case ctx.Err() != nil:
			return nil
		case errors.Is(err, nats.ErrSlowConsumer):
			line = map[string]any{"subject": subject, "error": "slow consumer: messages were dropped"}
		case err != nil:
			return fmt.Errorf("inspect %q: %w", subject, err)
		default:
			line = describeJoined(&parts, m, maxRecords)
		}
		if line == nil {
			continue // a part of a message still being joined
		}
		if err := writeJSONLine(w, line); err != nil {
			return fmt.Errorf("inspect %q: write: %w", subject, err)
		}
	}
}

// describeJoined describes m, or, when m is one of the parts of a message
// too large for one NATS message, nothing until its last part and then
// the joined message, with "parts" (how many). A part that does not
// continue its link's message is described with the joiner's error.
func describeJoined(j *partJoiner, m *nats.Msg, maxRecords int) map[string]any {
	n := 0
	if i, total, ok := parsePart(m.Header.Values(HeaderPart)); ok && i == total {
		n = total
	}
	joined, err := j.join(m)
	switch {
	case err != nil:
		d := map[string]any{"subject": m.Subject, "bytes": len(m.Data), "error": err.Error()}
		if len(m.Header) > 0 {
			d["headers"] = map[string][]string(m.Header)
		}
		return d
	case joined == nil:
		return nil
	}
	d := DescribeMsg(joined, maxRecords)
	if n > 0 {
		d["parts"] = n
	}
	return d
}

// DescribeMsg describes one message for `node inspect`: subject, type,
// job, channel ("edge 0: 1→0" on data and credit subjects), from, to, seq,
// checkpoint, gen and bytes (payload size). A buffer adds records (the
// count) and first (up to maxRecords records); its payload may be an array
// of records or a map with a "records" array, whose other fields go to
// body. Other types add body (the decoded payload) when there is one. A message that does not decode gets
// "error" (and its raw "headers") instead; this never panics. Values are
// JSON-safe (non-finite floats become strings).
func DescribeMsg(m *nats.Msg, maxRecords int) map[string]any {
	if m == nil {
		return map[string]any{"error": "nil message"}
	}
	d := map[string]any{"subject": m.Subject, "bytes": len(m.Data)}
	if s, err := ParseSubject(m.Subject); err == nil && (s.Kind == KindData || s.Kind == KindCredit) {
		d["channel"] = fmt.Sprintf("edge %d: %d→%d", s.Edge, s.From, s.To)
	}
	e, err := FromMsg(m)
	if err != nil && len(m.Header) == 0 && clusterSubject(m.Subject) {
		// Node heartbeats and cluster requests carry plain msgpack bodies.
		if body, derr := decodePlain(m.Data); derr == nil {
			d["body"] = body
			return d
		}
	}
	if err != nil {
		d["error"] = err.Error()
		if len(m.Header) > 0 {
			d["headers"] = map[string][]string(m.Header)
		}
		return d
	}
	d["type"] = e.Type
	d["job"] = e.Job
	d["from"] = e.From
	d["to"] = e.To
	d["seq"] = e.Seq
	d["checkpoint"] = e.Checkpoint
	d["gen"] = e.Gen
	if e.Type == TypeBuffer {
		n, first, rest, err := decodeRecords(e.Payload, maxRecords)
		if err != nil {
			d["error"] = fmt.Sprintf("buffer payload: %v", err)
			return d
		}
		d["records"] = n
		d["first"] = first
		if rest != nil {
			d["body"] = rest
		}
		return d
	}
	if len(e.Payload) > 0 {
		dec := newDecoder(e.Payload)
		body, err := dec.DecodeInterface()
		if err != nil {
			d["error"] = fmt.Sprintf("payload: %v", err)
			return d
		}
		d["body"] = jsonSafe(body)
	}
	return d
}

// decodeRecords returns the number of records in a buffer payload and its
// first limit records. The payload is either a msgpack array of records or
// a map with a "records" array; the map's other fields come back as rest.
// The payload has passed CheckMsgpack (FromMsg), so every length in it is
// bounded by its size.
func decodeRecords(payload []byte, limit int) (n int, first []any, rest map[string]any, err error) {
	if len(payload) == 0 {
		return 0, []any{}, nil, nil
	}
	dec := newDecoder(payload)
	code, err := dec.PeekCode()
	if err != nil {
		return 0, nil, nil, err
	}
	if msgpcode.IsFixedMap(code) || code == msgpcode.Map16 || code == msgpcode.Map32 {
		m, err := dec.DecodeMap()
		if err != nil {
			return 0, nil, nil, fmt.Errorf("want a msgpack array of records or a map with \"records\": %w", err)
		}
		recs, ok := m["records"].([]any)
		if !ok && m["records"] != nil {
			return 0, nil, nil, fmt.Errorf("\"records\" is a %T, want an array", m["records"])
		}
		delete(m, "records")
		first = make([]any, 0, min(len(recs), max(limit, 0)))
		for i := 0; i < len(recs) && i < limit; i++ {
			first = append(first, jsonSafe(recs[i]))
		}
		return len(recs), first, jsonSafe(m).(map[string]any), nil
	}
	n, err = dec.DecodeArrayLen()
	if err != nil {
		return 0, nil, nil, fmt.Errorf("want a msgpack array of records or a map with \"records\": %w", err)
	}
	if n < 0 { // msgpack nil
		return 0, nil, nil, errors.New("want a msgpack array of records, got nil")
	}
	first = make([]any, 0, min(n, max(limit, 0)))
	for i := 0; i < n && i < limit; i++ {
		r, err := dec.DecodeInterface()
		if err != nil {
			return 0, nil, nil, fmt.Errorf("record %d: %w", i, err)
		}
		first = append(first, jsonSafe(r))
	}
	return n, first, nil, nil
}

// clusterSubject reports whether subject is a node's or the cluster's own
// (weir.node.…, weir.cluster.…) rather than a job's.
func clusterSubject(subject string) bool {
	return strings.HasPrefix(subject, rootToken+"."+nodeToken+".") || strings.HasPrefix(subject, rootToken+".cluster.")
}

// decodePlain decodes a plain msgpack body for display, after the same
// bounds check as envelope payloads.
func decodePlain(data []byte) (any, error) {
	if len(data) == 0 {
		return nil, nil
	}
	if err := CheckMsgpack(data); err != nil {
		return nil, err
	}
	v, err := newDecoder(data).DecodeInterface()
	if err != nil {
		return nil, err
	}
	return jsonSafe(v), nil
}

// newDecoder decodes for display: maps with any key type (key group maps
// have integer keys) come back as map[any]any, which jsonSafe turns into
// JSON objects.
func newDecoder(b []byte) *msgpack.Decoder {
	dec := msgpack.NewDecoder(bytes.NewReader(b))
	dec.SetMapDecoder(func(d *msgpack.Decoder) (any, error) { return d.DecodeUntypedMap() })
	return dec
}
