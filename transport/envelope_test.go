package transport

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/vmihailenco/msgpack/v5"
)

func mustPack(t testing.TB, v any) []byte {
	t.Helper()
	b, err := msgpack.Marshal(v)
	if err != nil {
		t.Fatalf("msgpack: %v", err)
	}
	return b
}

func testEnvelope(t testing.TB) *Envelope {
	return &Envelope{
		Type: TypeBuffer, Job: "keycount",
		From: "n1/node/job-keycount/source-0", To: "n2/node/job-keycount/count-1",
		Seq: 7, Checkpoint: 3, Gen: 2,
		Payload: mustPack(t, []any{"a", 1, []byte{0, 1}}),
	}
}

func TestEnvelopeRoundTrip(t *testing.T) {
	subj := DataSubject("keycount", 0, 0, 1)
	cases := []*Envelope{
		testEnvelope(t),
		{Type: TypeBarrier, Job: "j", From: "a", To: "b", Seq: 1, Checkpoint: 1},
		{Type: TypeEOS, Job: "j", From: "a", To: "b", Seq: 1<<64 - 1, Checkpoint: 1<<64 - 1, Gen: 1<<63 - 1},
		{Type: TypeCredit, Job: "j", From: "a", To: "b", Seq: 2, Payload: mustPack(t, 100)},
		{Type: TypeControl, From: "coordinator", Seq: 1, Payload: mustPack(t, map[string]any{"op": "stop"})},
		{Type: TypeHeartbeat, From: "n1", Seq: 9},
	}
	for _, e := range cases {
		s := subj
		if e.Job == "" {
			s = NodeSubject("n1", KindCommand)
		} else if e.Job != "keycount" {
			s = DataSubject(e.Job, 0, 0, 1)
		}
		m := e.Msg(s)
		if m.Header.Get(HeaderType) != e.Type || m.Subject != s {
			t.Errorf("Msg: headers %v subject %q", m.Header, m.Subject)
		}
		got, err := FromMsg(m)
		if err != nil {
			t.Errorf("FromMsg(%+v): %v", e, err)
			continue
		}
		if !reflect.DeepEqual(got, e) {
			t.Errorf("round trip:\n got %+v\nwant %+v", got, e)
		}
	}
}

func TestFromMsgRejects(t *testing.T) {
	subj := DataSubject("keycount", 0, 0, 1)
	set := func(k, v string) func(*nats.Msg) { return func(m *nats.Msg) { m.Header.Set(k, v) } }
	del := func(k string) func(*nats.Msg) { return func(m *nats.Msg) { m.Header.Del(k) } }
	tests := []struct {
		name    string
		mutate  func(*nats.Msg)
		want    string // in the error text, besides the subject
		unknown bool
	}{
		{"no headers", func(m *nats.Msg) { m.Header = nil }, "Weir-Type: missing", false},
		{"missing type", del(HeaderType), "Weir-Type: missing", false},
		{"missing job", del(HeaderJob), "Weir-Job: missing", false},
		{"missing from", del(HeaderFrom), "Weir-From: missing", false},
		{"missing to", del(HeaderTo), "Weir-To: missing", false},
		{"missing seq", del(HeaderSeq), "Weir-Seq: missing", false},
		{"missing checkpoint", del(HeaderCheckpoint), "Weir-Checkpoint: missing", false},
		{"missing gen", del(HeaderGen), "Weir-Gen: missing", false},
		{"repeated seq", func(m *nats.Msg) { m.Header.Add(HeaderSeq, "8") }, "Weir-Seq: present 2 times", false},
		{"unknown type", set(HeaderType, "bogus"), `Weir-Type: "bogus" is not a known type`, true},
		{"empty type", set(HeaderType, ""), "Weir-Type: empty", false},
		{"seq not a number", set(HeaderSeq, "abc"), `Weir-Seq: "abc" is not an unsigned`, false},
		{"seq negative", set(HeaderSeq, "-1"), `Weir-Seq: "-1"`, false},
		{"seq leading zero", set(HeaderSeq, "07"), `Weir-Seq: "07"`, false},
		{"seq overflow", set(HeaderSeq, "18446744073709551616"), `Weir-Seq: "18446744073709551616"`, false},
		{"seq zero", set(HeaderSeq, "0"), "Weir-Seq: 0, sequences start at 1", false},
		{"checkpoint not a number", set(HeaderCheckpoint, "1.5"), `Weir-Checkpoint: "1.5"`, false},
		{"gen negative", set(HeaderGen, "-2"), `Weir-Gen: "-2"`, false},
		{"gen not a number", set(HeaderGen, "x"), `Weir-Gen: "x"`, false},
		{"bad job", set(HeaderJob, "a.b"), "Weir-Job:", false},
		{"job differs from subject", set(HeaderJob, "other"), `Weir-Job "other" does not match the subject's job "keycount"`, false},
		{"empty from", set(HeaderFrom, ""), "Weir-From: empty", false},
		{"empty to on data", set(HeaderTo, ""), "Weir-To: empty", false},
		{"control char in from", set(HeaderFrom, "a\r\nWeir-Type: eos"), "Weir-From:", false},
		{"leading blank in to", set(HeaderTo, " b"), "Weir-To:", false},
		{"barrier without checkpoint", func(m *nats.Msg) {
			m.Header.Set(HeaderType, TypeBarrier)
			m.Header.Set(HeaderCheckpoint, "0")
		}, "barrier needs a checkpoint", false},
		{"garbage payload", func(m *nats.Msg) { m.Data = []byte{0xc1, 0x00} }, "payload (2 bytes): msgpack: invalid code 0xc1", false},
		{"truncated payload", func(m *nats.Msg) { m.Data = m.Data[:len(m.Data)-1] }, "msgpack truncated", false},
		{"trailing bytes", func(m *nats.Msg) { m.Data = append(m.Data, 0x01) }, "1 trailing bytes", false},
		{"allocation bomb", func(m *nats.Msg) { m.Data = []byte{0xdd, 0xff, 0xff, 0xff, 0xff} }, "declares 4294967295 values", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := testEnvelope(t).Msg(subj)
			tt.mutate(m)
			e, err := FromMsg(m)
			if err == nil {
				t.Fatalf("FromMsg accepted %+v", e)
			}
			if !errors.Is(err, ErrMalformed) {
				t.Errorf("%v does not wrap ErrMalformed", err)
			}
			if errors.Is(err, ErrUnknownType) != tt.unknown {
				t.Errorf("errors.Is(%v, ErrUnknownType) = %v, want %v", err, !tt.unknown, tt.unknown)
			}
			if msg := err.Error(); !strings.Contains(msg, `"`+subj+`"`) || !strings.Contains(msg, tt.want) {
				t.Errorf("error %q should name the subject and contain %q", msg, tt.want)
			}
		})
	}
	if _, err := FromMsg(nil); !errors.Is(err, ErrMalformed) {
		t.Errorf("FromMsg(nil) = %v", err)
	}
}

func TestFromMsgJoblessOnNodeSubject(t *testing.T) {
	// Control and heartbeat may omit Job and To; data-plane types may not.
	m := (&Envelope{Type: TypeHeartbeat, From: "n1", Seq: 1}).Msg(NodeSubject("n1", KindHeartbeat))
	if _, err := FromMsg(m); err != nil {
		t.Fatalf("heartbeat: %v", err)
	}
	m = (&Envelope{Type: TypeEOS, From: "a", To: "b", Seq: 1}).Msg(NodeSubject("n1", KindCommand))
	if _, err := FromMsg(m); err == nil || !strings.Contains(err.Error(), "Weir-Job") {
		t.Fatalf("eos without job: %v", err)
	}
}

// TestFromMsgUnwalked: only a buffer's payload is left unwalked; its headers
// and every other message type are checked as FromMsg checks them.
func TestFromMsgUnwalked(t *testing.T) {
	subj := DataSubject("keycount", 0, 0, 1)
	garbage := []byte{0xdd, 0xff, 0xff, 0xff, 0xff} // an array claiming 4G elements
	buf := testEnvelope(t)
	buf.Payload = garbage
	if _, err := FromMsg(buf.Msg(subj)); !errors.Is(err, ErrMalformed) {
		t.Fatalf("FromMsg of a buffer with a garbage payload: %v, want ErrMalformed", err)
	}
	got, err := FromMsgUnwalked(buf.Msg(subj))
	if err != nil {
		t.Fatalf("FromMsgUnwalked of a buffer with a garbage payload: %v, want it passed on unwalked", err)
	}
	if string(got.Payload) != string(garbage) {
		t.Fatalf("payload %x, want %x", got.Payload, garbage)
	}
	barrier := &Envelope{Type: TypeBarrier, Job: "keycount", From: "a", To: "b", Seq: 1, Checkpoint: 1, Payload: garbage}
	if _, err := FromMsgUnwalked(barrier.Msg(subj)); !errors.Is(err, ErrMalformed) {
		t.Fatalf("FromMsgUnwalked of a barrier with a garbage payload: %v, want ErrMalformed", err)
	}
	noSeq := testEnvelope(t)
	noSeq.Seq = 0
	if _, err := FromMsgUnwalked(noSeq.Msg(subj)); !errors.Is(err, ErrMalformed) {
		t.Fatalf("FromMsgUnwalked of a buffer with seq 0: %v, want ErrMalformed", err)
	}
	otherJob := testEnvelope(t)
	otherJob.Job = "other"
	if _, err := FromMsgUnwalked(otherJob.Msg(subj)); !errors.Is(err, ErrMalformed) {
		t.Fatalf("FromMsgUnwalked of a buffer for another job: %v, want ErrMalformed", err)
	}
}
