package transport

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go"
)

// Message types, carried in the Weir-Type header.
const (
	TypeBuffer    = "buffer"    // a batch of records: payload is a msgpack array
	TypeBarrier   = "barrier"   // a checkpoint barrier; Checkpoint must be set
	TypeEOS       = "eos"       // end of stream on a channel
	TypeCredit    = "credit"    // flow-control credit, consumer → producer
	TypeControl   = "control"   // coordinator and node commands
	TypeHeartbeat = "heartbeat" // node liveness
)

// NATS header names of the Envelope fields.
const (
	HeaderType       = "Weir-Type"
	HeaderJob        = "Weir-Job"
	HeaderFrom       = "Weir-From"
	HeaderTo         = "Weir-To"
	HeaderSeq        = "Weir-Seq"
	HeaderCheckpoint = "Weir-Checkpoint"
	HeaderGen        = "Weir-Gen"
)

// maxEndpointLen bounds Weir-From and Weir-To.
const maxEndpointLen = 512

// ErrMalformed is wrapped by every error about a message that is not a
// valid weir envelope (missing or repeated header, bad number, bad payload,
// unknown type).
var ErrMalformed = errors.New("malformed weir message")

// ErrUnknownType is wrapped when Weir-Type names no known type. It wraps
// ErrMalformed itself, so errors.Is(err, ErrMalformed) holds for these
// errors too; test ErrUnknownType first to tell the two apart.
var ErrUnknownType = fmt.Errorf("%w: unknown type", ErrMalformed)

// Envelope is one weir message on NATS. Metadata travels in the Weir-*
// headers, Payload in the message data.
type Envelope struct {
	Type       string // one of the Type* constants
	Job        string // job id; may be empty only for control and heartbeat
	From       string // sending endpoint, e.g. "n1/node/job-keycount/source-0"
	To         string // receiving endpoint; may be empty only for control and heartbeat
	Seq        uint64 // per-link sequence (link = From→To), starts at 1, no gaps
	Checkpoint uint64 // checkpoint id the message belongs to, 0 if none
	Gen        int    // incarnation of the sender (>= 0), so stale senders can be told apart
	Payload    []byte // empty, or exactly one msgpack value; opaque to this package
}

// Msg builds the NATS message for e on subject. Data aliases e.Payload.
// It does not validate e; Publisher.Publish does.
func (e *Envelope) Msg(subject string) *nats.Msg {
	h := make(nats.Header, 7)
	h[HeaderType] = []string{e.Type}
	h[HeaderJob] = []string{e.Job}
	h[HeaderFrom] = []string{e.From}
	h[HeaderTo] = []string{e.To}
	h[HeaderSeq] = []string{strconv.FormatUint(e.Seq, 10)}
	h[HeaderCheckpoint] = []string{strconv.FormatUint(e.Checkpoint, 10)}
	h[HeaderGen] = []string{strconv.Itoa(e.Gen)}
	return &nats.Msg{Subject: subject, Header: h, Data: e.Payload}
}

// FromMsg decodes and checks a received message. Every Weir-* header must
// be present exactly once, numbers must be canonical decimals, the envelope
// must pass Validate, and on a weir.<job>.… subject Weir-Job must name that
// job. Errors name the subject and the bad header and wrap ErrMalformed
// (ErrUnknownType for an unknown Weir-Type). Payload aliases m.Data, and
// is nil when the message has no data.
//
// A payload that passes is safe to hand to a msgpack decoder: see
// CheckMsgpack for why that matters.
func FromMsg(m *nats.Msg) (*Envelope, error) {
	return fromMsg(m, true)
}

// FromMsgUnwalked is FromMsg that leaves a buffer's payload unwalked, for a
// receiver that reads buffer payloads only with bounds-checked decoders and
// treats a decode error as bad input (actors.Remote): the bulk of the
// traffic is then read once instead of twice. Every other message type, and
// all headers, are checked as FromMsg checks them.
func FromMsgUnwalked(m *nats.Msg) (*Envelope, error) {
	return fromMsg(m, false)
}

// fromMsg is FromMsg; walkBuffers says whether a buffer's payload is
// checked too.
func fromMsg(m *nats.Msg, walkBuffers bool) (*Envelope, error) {
	if m == nil {
		return nil, fmt.Errorf("nil message: %w", ErrMalformed)
	}
	p := headerReader{h: m.Header}
	e := &Envelope{
		Type:       p.str(HeaderType),
		Job:        p.str(HeaderJob),
		From:       p.str(HeaderFrom),
		To:         p.str(HeaderTo),
		Seq:        p.uint(HeaderSeq),
		Checkpoint: p.uint(HeaderCheckpoint),
		Gen:        p.gen(),
	}
	if len(m.Data) > 0 {
		e.Payload = m.Data
	}
	if p.err != nil {
		return nil, fmt.Errorf("weir message on %q: %w", m.Subject, p.err)
	}
	if err := e.validate(walkBuffers || e.Type != TypeBuffer); err != nil {
		return nil, fmt.Errorf("weir message on %q: %w", m.Subject, err)
	}
	if job, ok := subjectJob(m.Subject); ok && job != e.Job {
		return nil, fmt.Errorf("weir message on %q: header %s %q does not match the subject's job %q: %w",
			m.Subject, HeaderJob, e.Job, job, ErrMalformed)
	}
	return e, nil
}

// Validate checks what FromMsg checks on the receiving side, except the
// subject: a known type; Seq >= 1; Gen >= 0; From non-empty; Job a ValidJob
// and To non-empty for buffer, barrier, eos and credit (optional for
// control and heartbeat); Checkpoint >= 1 for a barrier; endpoints without
// control characters or leading blanks; Payload empty or one well-formed
// msgpack value.
func (e *Envelope) Validate() error {
	return e.validate(true)
}

// validate is Validate; the payload is walked only when checkPayload is set.
func (e *Envelope) validate(checkPayload bool) error {
	if err := e.validateFields(checkPayload); err != nil {
		return err
	}
	if e.Seq == 0 {
		return fmt.Errorf("header %s: 0, sequences start at 1: %w", HeaderSeq, ErrMalformed)
	}
	return nil
}

// validateFields is Validate without the Seq check (Publisher stamps Seq
// after it); the payload is walked only when checkPayload is set.
func (e *Envelope) validateFields(checkPayload bool) error {
	dataPlane := false
	switch e.Type {
	case TypeBuffer, TypeBarrier, TypeEOS, TypeCredit:
		dataPlane = true
	case TypeControl, TypeHeartbeat:
	case "":
		return fmt.Errorf("header %s: empty: %w", HeaderType, ErrMalformed)
	default:
		return fmt.Errorf("header %s: %q is not a known type: %w", HeaderType, e.Type, ErrUnknownType)
	}
	if e.Job != "" || dataPlane {
		if err := ValidJob(e.Job); err != nil {
			return fmt.Errorf("header %s: %v: %w", HeaderJob, err, ErrMalformed)
		}
	}
	if err := validEndpoint(e.From, true); err != nil {
		return fmt.Errorf("header %s: %v: %w", HeaderFrom, err, ErrMalformed)
	}
	if err := validEndpoint(e.To, dataPlane); err != nil {
		return fmt.Errorf("header %s: %v: %w", HeaderTo, err, ErrMalformed)
	}
	if e.Gen < 0 {
		return fmt.Errorf("header %s: %d is negative: %w", HeaderGen, e.Gen, ErrMalformed)
	}
	if e.Type == TypeBarrier && e.Checkpoint == 0 {
		return fmt.Errorf("header %s: a barrier needs a checkpoint id >= 1: %w", HeaderCheckpoint, ErrMalformed)
	}
	if checkPayload && len(e.Payload) > 0 {
		if err := CheckMsgpack(e.Payload); err != nil {
			return fmt.Errorf("payload (%d bytes): %v: %w", len(e.Payload), err, ErrMalformed)
		}
	}
	return nil
}

// validEndpoint accepts what survives a trip through NATS headers unchanged.
func validEndpoint(s string, required bool) error {
	switch {
	case s == "":
		if required {
			return errors.New("empty")
		}
		return nil
	case len(s) > maxEndpointLen:
		return fmt.Errorf("%d bytes long, at most %d allowed", len(s), maxEndpointLen)
	case s[0] == ' ':
		return fmt.Errorf("%q starts with a blank", s)
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f {
			return fmt.Errorf("%q has a control character at offset %d", s, i)
		}
	}
	return nil
}

// subjectJob returns the job token of a weir.<job>.… subject.
func subjectJob(subject string) (string, bool) {
	rest, ok := strings.CutPrefix(subject, rootToken+".")
	if !ok {
		return "", false
	}
	job, _, ok := strings.Cut(rest, ".")
	if !ok || job == nodeToken {
		return "", false
	}
	return job, true
}

// headerReader reads Weir-* headers, keeping the first error.
type headerReader struct {
	h   nats.Header
	err error
}

func (p *headerReader) str(key string) string {
	if p.err != nil {
		return ""
	}
	switch v := p.h[key]; len(v) {
	case 0:
		p.err = fmt.Errorf("header %s: missing: %w", key, ErrMalformed)
		return ""
	case 1:
		return v[0]
	default:
		p.err = fmt.Errorf("header %s: present %d times, want once: %w", key, len(v), ErrMalformed)
		return ""
	}
}

func (p *headerReader) uint(key string) uint64 {
	s := p.str(key)
	if p.err != nil {
		return 0
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil || strconv.FormatUint(n, 10) != s {
		p.err = fmt.Errorf("header %s: %q is not an unsigned decimal integer: %w", key, s, ErrMalformed)
		return 0
	}
	return n
}

func (p *headerReader) gen() int {
	s := p.str(HeaderGen)
	if p.err != nil {
		return 0
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || strconv.Itoa(n) != s {
		p.err = fmt.Errorf("header %s: %q is not a non-negative decimal integer: %w", HeaderGen, s, ErrMalformed)
		return 0
	}
	return n
}
