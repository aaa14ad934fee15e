package transport

import (
	"bytes"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/vmihailenco/msgpack/v5"
)

// headerBlock renders h as a NATS header block, the form nats.go decodes.
func headerBlock(h nats.Header) []byte {
	var b strings.Builder
	b.WriteString("NATS/1.0\r\n")
	for k, vs := range h {
		for _, v := range vs {
			b.WriteString(k + ": " + v + "\r\n")
		}
	}
	b.WriteString("\r\n")
	return []byte(b.String())
}

func addEnvelopeSeeds(f *testing.F) {
	subj := DataSubject("keycount", 0, 0, 1)
	good := testEnvelope(f).Msg(subj)
	f.Add(subj, headerBlock(good.Header), good.Data)
	f.Add(subj, headerBlock(good.Header), []byte{0xdd, 0xff, 0xff, 0xff, 0xff})
	f.Add(subj, headerBlock(good.Header), []byte{0xdb, 0xff, 0xff, 0xff, 0xff})
	f.Add(subj, headerBlock(good.Header), mustPack(f, []any{1.5, map[string]any{"k": []byte("v")}}))
	f.Add(subj, headerBlock(good.Header), mustPack(f, map[string]any{"k": "data", "records": []any{[]any{"a", 1}}}))
	b := (&Envelope{Type: TypeBarrier, Job: "keycount", From: "a", To: "b", Seq: 1, Checkpoint: 4}).Msg(subj)
	f.Add(subj, headerBlock(b.Header), []byte(nil))
	c := (&Envelope{Type: TypeControl, From: "coordinator", Seq: 3, Payload: mustPack(f, map[string]any{"op": "x"})}).Msg(subj)
	f.Add(CoordinatorSubject("keycount"), headerBlock(c.Header), c.Data)
	f.Add("weir.node.n1.hb", []byte("NATS/1.0\r\nWeir-Type: heartbeat\r\n\r\n"), []byte{})
	f.Add("x", []byte("garbage"), []byte("garbage"))
	f.Add(subj, []byte("NATS/1.0 503\r\n\r\n"), []byte{0xc1})
}

// FuzzFromMsg feeds FromMsg arbitrary subjects, header blocks and data. It
// must never panic; whatever it accepts must survive Msg → FromMsg
// unchanged and be describable by DescribeMsg as one JSON line.
func FuzzFromMsg(f *testing.F) {
	addEnvelopeSeeds(f)
	f.Fuzz(func(t *testing.T, subject string, hdr, data []byte) {
		h, err := nats.DecodeHeadersMsg(hdr)
		if err != nil {
			h = nil
		}
		m := &nats.Msg{Subject: subject, Header: h, Data: data}
		e, err := FromMsg(m)
		if err := writeJSONLine(io.Discard, DescribeMsg(m, 3)); err != nil {
			t.Fatalf("writeJSONLine: %v", err)
		}
		if err != nil {
			if !strings.Contains(err.Error(), "malformed weir message") {
				t.Fatalf("error %q does not say malformed", err)
			}
			return
		}
		again, err := FromMsg(e.Msg(subject))
		if err != nil {
			t.Fatalf("accepted %+v, but its own Msg is rejected: %v", e, err)
		}
		if !reflect.DeepEqual(again, e) {
			t.Fatalf("round trip changed the envelope:\n got %+v\nwant %+v", again, e)
		}
	})
}

// FuzzCheckMsgpack: whatever CheckMsgpack accepts, the msgpack decoder can
// skip exactly and decode generically without panicking. (Input that it
// rejects is never given to the decoder: that is the point of the check.)
func FuzzCheckMsgpack(f *testing.F) {
	for _, v := range []any{nil, 1, "s", []any{1, "a", []byte{2}}, map[string]any{"k": []any{1.5}}, map[int]int{1: 2}} {
		f.Add(mustPack(f, v))
	}
	f.Add([]byte{0xdd, 0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{0xd6, 0xff, 0, 0, 0, 1}) // timestamp ext
	f.Fuzz(func(t *testing.T, b []byte) {
		if CheckMsgpack(b) != nil {
			return
		}
		r := bytes.NewReader(b)
		if err := msgpack.NewDecoder(r).Skip(); err != nil || r.Len() != 0 {
			t.Fatalf("CheckMsgpack accepted % x, msgpack Skip: err %v, %d bytes left", b, err, r.Len())
		}
		v, err := msgpack.NewDecoder(bytes.NewReader(b)).DecodeInterface()
		if err == nil {
			if err := writeJSONLine(io.Discard, map[string]any{"body": jsonSafe(v)}); err != nil {
				t.Fatalf("writeJSONLine: %v", err)
			}
		}
	})
}
