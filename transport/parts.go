package transport

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go"
)

// HeaderPart numbers the parts of an envelope too large for one NATS
// message ("I/N", 1 ≤ I ≤ N): Publisher.Publish sends such an envelope as
// N messages on its subject, one after the other, each with the
// envelope's headers (its one Seq too) and the next slice of its payload;
// Subscribe joins them into the envelope before anything else sees it.
const HeaderPart = "Weir-Part"

// maxParts bounds the parts of one envelope, maxJoined the bytes of the
// parts joined: a receiver never holds more for one link.
const (
	maxParts  = 1 << 16
	maxJoined = PendingBytesLimit
)

// headerLen is the size of h on the wire (NATS/1.0 line, each value's
// line, the blank line).
func headerLen(h nats.Header) int {
	n := len("NATS/1.0\r\n\r\n")
	for k, vs := range h {
		for _, v := range vs {
			n += len(k) + len(": ") + len(v) + len("\r\n")
		}
	}
	return n
}

// splitMsg returns m as it goes on a connection whose messages carry at
// most max bytes (headers and data): m itself when it fits (or max is
// unknown), else its parts, each with m's headers and HeaderPart.
func splitMsg(m *nats.Msg, max int64) ([]*nats.Msg, error) {
	head := headerLen(m.Header)
	if max <= 0 || int64(head+len(m.Data)) <= max {
		return []*nats.Msg{m}, nil
	}
	room := int(max) - head - len(HeaderPart) - len(": 65536/65536\r\n")
	if room < 1 {
		return nil, fmt.Errorf("headers of %d bytes leave no room for data in a message of at most %d bytes", head, max)
	}
	n := (len(m.Data) + room - 1) / room
	if n > maxParts {
		return nil, fmt.Errorf("payload of %d bytes needs %d parts of %d bytes, more than %d", len(m.Data), n, room, maxParts)
	}
	parts := make([]*nats.Msg, 0, n)
	for i := 0; i < n; i++ {
		h := make(nats.Header, len(m.Header)+1)
		for k, vs := range m.Header {
			h[k] = vs
		}
		h[HeaderPart] = []string{strconv.Itoa(i+1) + "/" + strconv.Itoa(n)}
		end := min((i+1)*room, len(m.Data))
		parts = append(parts, &nats.Msg{Subject: m.Subject, Header: h, Data: m.Data[i*room : end]})
	}
	return parts, nil
}

// partial is an envelope whose first parts arrived.
type partial struct {
	seq, gen string // the parts' Weir-Seq and Weir-Gen
	next, n  int    // the part awaited, of n
	data     []byte
}

// partJoiner joins the parts of envelopes arriving on one subscription,
// per link (the parts of one envelope come in order, but another link's
// may come between them). Not safe for concurrent use: a subscription's
// messages arrive one at a time.
type partJoiner struct {
	partial map[string]*partial // link → its envelope being joined
}

// join returns m when it is not a part, the joined message when m is the
// last part of one, and nil while parts are missing. A part that does not
// continue its link's envelope (wrong number, seq or gen; too many parts
// or bytes) is an error wrapping ErrMalformed, and the envelope it belongs
// to is dropped. An envelope whose later parts are lost is dropped when
// the link's next envelope begins: the receiver then sees a gap in Seq.
func (j *partJoiner) join(m *nats.Msg) (*nats.Msg, error) {
	vs := m.Header.Values(HeaderPart)
	if len(vs) == 0 {
		return m, nil
	}
	link := LinkKey(m.Header.Get(HeaderFrom), m.Header.Get(HeaderTo))
	seq, gen := m.Header.Get(HeaderSeq), m.Header.Get(HeaderGen)
	i, n, ok := parsePart(vs)
	if !ok {
		delete(j.partial, link)
		return nil, fmt.Errorf("weir message on %q: header %s %q: want I/N with 1 ≤ I ≤ N ≤ %d, N ≥ 2: %w", m.Subject, HeaderPart, vs, maxParts, ErrMalformed)
	}
	p := j.partial[link]
	if i == 1 {
		if j.partial == nil {
			j.partial = map[string]*partial{}
		}
		p = &partial{seq: seq, gen: gen, next: 1, n: n}
		j.partial[link] = p
	}
	if p == nil || p.seq != seq || p.gen != gen || p.n != n || p.next != i {
		delete(j.partial, link)
		return nil, fmt.Errorf("weir message on %q: part %d/%d of seq %s does not continue what link %s sent: %w", m.Subject, i, n, seq, link, ErrMalformed)
	}
	if len(p.data)+len(m.Data) > maxJoined {
		delete(j.partial, link)
		return nil, fmt.Errorf("weir message on %q: parts of seq %s exceed %d bytes: %w", m.Subject, seq, maxJoined, ErrMalformed)
	}
	p.data = append(p.data, m.Data...)
	p.next++
	if i < n {
		return nil, nil
	}
	delete(j.partial, link)
	h := make(nats.Header, len(m.Header))
	for k, v := range m.Header {
		if k != HeaderPart {
			h[k] = v
		}
	}
	return &nats.Msg{Subject: m.Subject, Reply: m.Reply, Header: h, Data: p.data}, nil
}

// parsePart parses the one HeaderPart value "I/N".
func parsePart(vs []string) (i, n int, ok bool) {
	if len(vs) != 1 {
		return 0, 0, false
	}
	a, b, found := strings.Cut(vs[0], "/")
	if !found {
		return 0, 0, false
	}
	i, ok1 := canonicalInt(a)
	n, ok2 := canonicalInt(b)
	return i, n, ok1 && ok2 && n >= 2 && n <= maxParts && i >= 1 && i <= n
}

// canonicalInt parses a decimal without sign or leading zeros.
func canonicalInt(s string) (int, bool) {
	if s == "" || len(s) > 6 || (s[0] == '0' && len(s) > 1) {
		return 0, false
	}
	v, err := strconv.Atoi(s)
	if err != nil || v < 0 || strconv.Itoa(v) != s {
		return 0, false
	}
	return v, true
}
