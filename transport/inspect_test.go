package transport

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/weirstream/weir/internal/logbuf"
	"github.com/weirstream/weir/internal/natstest"
)

// jsonRoundTrip turns d into what a reader of the JSON line sees.
func jsonRoundTrip(t *testing.T, d map[string]any) map[string]any {
	t.Helper()
	var buf bytes.Buffer
	if err := writeJSONLine(&buf, d); err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(buf.Bytes(), &out); err != nil {
		t.Fatalf("line %q: %v", buf.String(), err)
	}
	return out
}

func TestDescribeMsg(t *testing.T) {
	buf := &Envelope{Type: TypeBuffer, Job: "keycount", From: "n1/src-1", To: "n2/count-0", Seq: 4, Checkpoint: 2, Gen: 1,
		Payload: mustPack(t, []any{"a", map[string]any{"k": "b", "n": 2}, 3.5})}
	wire := &Envelope{Type: TypeBuffer, Job: "j", From: "a", To: "b", Seq: 1,
		Payload: mustPack(t, map[string]any{"k": "data", "seq": 9, "records": []any{[]any{"k", 1}, []any{"q", 2}}})}
	ctl := &Envelope{Type: TypeControl, Job: "j", From: "coordinator", Seq: 2,
		Payload: mustPack(t, map[string]any{"op": "trigger", "x": math.NaN()})}
	tests := []struct {
		name string
		msg  *nats.Msg
		max  int
		want map[string]any // after a JSON round trip
	}{
		{"buffer", buf.Msg(DataSubject("keycount", 0, 1, 0)), 2, map[string]any{
			"subject": "weir.keycount.data.0.1.0", "type": "buffer", "job": "keycount", "channel": "edge 0: 1→0",
			"from": "n1/src-1", "to": "n2/count-0", "seq": 4.0, "checkpoint": 2.0, "gen": 1.0,
			"records": 3.0, "first": []any{"a", map[string]any{"k": "b", "n": 2.0}}, "bytes": float64(len(buf.Payload)),
		}},
		{"buffer, no records asked", buf.Msg("weir.keycount.data.3.0.2"), 0, map[string]any{
			"subject": "weir.keycount.data.3.0.2", "type": "buffer", "job": "keycount", "channel": "edge 3: 0→2",
			"from": "n1/src-1", "to": "n2/count-0", "seq": 4.0, "checkpoint": 2.0, "gen": 1.0,
			"records": 3.0, "first": []any{}, "bytes": float64(len(buf.Payload)),
		}},
		{"buffer as a map with records", wire.Msg(DataSubject("j", 2, 0, 1)), 1, map[string]any{
			"subject": "weir.j.data.2.0.1", "type": "buffer", "job": "j", "channel": "edge 2: 0→1",
			"from": "a", "to": "b", "seq": 1.0, "checkpoint": 0.0, "gen": 0.0,
			"records": 2.0, "first": []any{[]any{"k", 1.0}}, "body": map[string]any{"k": "data", "seq": 9.0},
			"bytes": float64(len(wire.Payload)),
		}},
		{"credit", (&Envelope{Type: TypeCredit, Job: "j", From: "c", To: "p", Seq: 9, Payload: mustPack(t, 64)}).Msg(CreditSubject("j", 1, 2, 3)), 5, map[string]any{
			"subject": "weir.j.credit.1.2.3", "type": "credit", "job": "j", "channel": "edge 1: 2→3",
			"from": "c", "to": "p", "seq": 9.0, "checkpoint": 0.0, "gen": 0.0, "body": 64.0, "bytes": 1.0,
		}},
		{"barrier without payload", (&Envelope{Type: TypeBarrier, Job: "j", From: "a", To: "b", Seq: 1, Checkpoint: 7}).Msg(DataSubject("j", 0, 0, 0)), 5, map[string]any{
			"subject": "weir.j.data.0.0.0", "type": "barrier", "job": "j", "channel": "edge 0: 0→0",
			"from": "a", "to": "b", "seq": 1.0, "checkpoint": 7.0, "gen": 0.0, "bytes": 0.0,
		}},
		{"control with NaN", ctl.Msg(ControlSubject("j", "n1")), 5, map[string]any{
			"subject": "weir.j.ctl.n1", "type": "control", "job": "j", "from": "coordinator", "to": "",
			"seq": 2.0, "checkpoint": 0.0, "gen": 0.0, "body": map[string]any{"op": "trigger", "x": "NaN"}, "bytes": float64(len(ctl.Payload)),
		}},
		{"heartbeat", (&Envelope{Type: TypeHeartbeat, From: "n1", Seq: 3}).Msg(NodeSubject("n1", KindHeartbeat)), 5, map[string]any{
			"subject": "weir.node.n1.hb", "type": "heartbeat", "job": "", "from": "n1", "to": "",
			"seq": 3.0, "checkpoint": 0.0, "gen": 0.0, "bytes": 0.0,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := jsonRoundTrip(t, DescribeMsg(tt.msg, tt.max))
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("DescribeMsg:\n got %v\nwant %v", got, tt.want)
			}
		})
	}
}

func TestDescribeMsgErrors(t *testing.T) {
	good := &Envelope{Type: TypeBuffer, Job: "j", From: "a", To: "b", Seq: 1}
	tests := []struct {
		name string
		msg  *nats.Msg
		want string
	}{
		{"no headers", &nats.Msg{Subject: "weir.j.data.0.0.1", Data: []byte("hello")}, "Weir-Type: missing"},
		{"unknown type", (&Envelope{Type: "x", Job: "j", From: "a", To: "b", Seq: 1}).Msg("weir.j.data.0.0.1"), "not a known type"},
		{"truncated", func() *nats.Msg { m := good.Msg("weir.j.data.0.0.1"); m.Data = []byte{0x93, 0x01}; return m }(), "msgpack truncated"},
		{"buffer not an array", func() *nats.Msg { m := good.Msg("weir.j.data.0.0.1"); m.Data = mustPack(t, "x"); return m }(), "want a msgpack array of records"},
		{"buffer of nil", func() *nats.Msg { m := good.Msg("weir.j.data.0.0.1"); m.Data = []byte{0xc0}; return m }(), "got nil"},
		{"buffer map with bad records", func() *nats.Msg {
			m := good.Msg("weir.j.data.0.0.1")
			m.Data = mustPack(t, map[string]any{"records": "x"})
			return m
		}(), `"records" is a string`},
		{"unknown ext", func() *nats.Msg {
			m := good.Msg("weir.j.data.0.0.1")
			m.Data = []byte{0x91, 0xd4, 0x05, 0x00}
			return m
		}(), "record 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := jsonRoundTrip(t, DescribeMsg(tt.msg, 3))
			if got["subject"] != tt.msg.Subject {
				t.Errorf("subject %v, want %q", got["subject"], tt.msg.Subject)
			}
			if e, _ := got["error"].(string); !strings.Contains(e, tt.want) {
				t.Errorf("error %q, want it to contain %q (line %v)", e, tt.want, got)
			}
		})
	}
	if got := DescribeMsg(nil, 1); got["error"] != "nil message" {
		t.Errorf("nil: %v", got)
	}
}

func TestInspect(t *testing.T) {
	s := natstest.Start(t, natstest.Options{})
	nc := s.Connect(t)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out logbuf.Buffer
	done := make(chan error, 1)
	go func() { done <- Inspect(ctx, nc, "", &out, 2) }()
	// Publishing on the same connection after the subscription exists puts
	// the messages behind the SUB: the server delivers them to it.
	waitFor(t, "Inspect to subscribe", func() bool { return nc.NumSubscriptions() == 1 })
	flushSubscription(t, nc)

	p := NewPublisher(nc)
	subj := DataSubject("keycount", 0, 1, 0)
	for i := range 2 {
		recs := []any{"k1", "k2", "k3"}[:2+i]
		if err := p.Publish(subj, &Envelope{Type: TypeBuffer, Job: "keycount", From: "n1/src-1", To: "n2/count-0", Payload: mustPack(t, recs)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := nc.Publish("weir.keycount.ctl.n1", []byte("not a weir message")); err != nil {
		t.Fatal(err)
	}
	if err := nc.Publish("elsewhere", []byte("not for weir.>")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "3 lines", func() bool { return len(out.Lines()) >= 3 })
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Inspect: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Inspect did not return within 5s of cancel")
	}

	lines := out.Lines()
	if len(lines) != 3 {
		t.Fatalf("%d lines, want 3:\n%s", len(lines), strings.Join(lines, "\n"))
	}
	for i, wantPrefix := range []string{
		`{"subject":"weir.keycount.data.0.1.0","type":"buffer","job":"keycount","channel":"edge 0: 1→0","from":"n1/src-1","to":"n2/count-0","seq":1,"checkpoint":0,"gen":0,"records":2,"first":["k1","k2"],"bytes":7}`,
		`{"subject":"weir.keycount.data.0.1.0","type":"buffer","job":"keycount","channel":"edge 0: 1→0","from":"n1/src-1","to":"n2/count-0","seq":2,"checkpoint":0,"gen":0,"records":3,"first":["k1","k2"],"bytes":10}`,
		`{"subject":"weir.keycount.ctl.n1","bytes":18,"error":"weir message on \"weir.keycount.ctl.n1\": header Weir-Type: missing: malformed weir message"}`,
	} {
		if lines[i] != wantPrefix {
			t.Errorf("line %d:\n got %s\nwant %s", i, lines[i], wantPrefix)
		}
	}
	if n := nc.NumSubscriptions(); n != 0 {
		t.Errorf("Inspect left %d subscriptions", n)
	}
}

func TestInspectClosedConnection(t *testing.T) {
	s := natstest.Start(t, natstest.Options{})
	nc := s.Connect(t)
	done := make(chan error, 1)
	go func() { done <- Inspect(context.Background(), nc, "weir.j.>", &logbuf.Buffer{}, 1) }()
	waitFor(t, "Inspect to subscribe", func() bool { return nc.NumSubscriptions() == 1 })
	flushSubscription(t, nc)
	nc.Close()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), `"weir.j.>"`) {
			t.Fatalf("Inspect after close: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Inspect did not return within 5s of close")
	}
	if err := Inspect(context.Background(), nc, "", &logbuf.Buffer{}, 1); err == nil {
		t.Fatal("Inspect on a closed connection succeeded")
	}
}

// TestDescribeMsgIntMapKeys: maps keyed by integers (key-group maps in
// acknowledgements) are shown as JSON objects, not as errors.
func TestDescribeMsgIntMapKeys(t *testing.T) {
	m := (&Envelope{Type: TypeControl, From: "a", Seq: 1}).Msg("weir.j.ctl.n1")
	m.Header.Set(HeaderJob, "j")
	m.Data = mustPack(t, map[string]any{"snap": map[int]int{7: 2}})
	d := DescribeMsg(m, 3)
	if e, ok := d["error"]; ok {
		t.Fatalf("error %v", e)
	}
	body, ok := d["body"].(map[string]any)
	if !ok {
		t.Fatalf("body %T", d["body"])
	}
	snap, ok := body["snap"].(map[string]any)
	if !ok || fmt.Sprint(snap["7"]) != "2" {
		t.Fatalf("snap %#v", body["snap"])
	}
}

// TestInspectJoinsParts publishes envelopes too large for the server's
// max payload (4096 bytes), so each goes as parts, from two links whose
// parts interleave, and one part that continues nothing: Inspect prints
// each envelope once, joined (its whole size, "parts"), and the stray part
// as an error line.
func TestInspectJoinsParts(t *testing.T) {
	const max = 4096
	s := natstest.Start(t, natstest.Options{MaxPayload: max})
	nc := s.Connect(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out logbuf.Buffer
	done := make(chan error, 1)
	go func() { done <- Inspect(ctx, nc, "", &out, 2) }()
	waitFor(t, "Inspect to subscribe", func() bool { return nc.NumSubscriptions() == 1 })
	flushSubscription(t, nc)

	subj := ControlSubject("keycount", "n1")
	var wg sync.WaitGroup
	for _, from := range []string{"n2/a", "n3/b"} {
		pub := NewPublisher(s.Connect(t))
		wg.Add(1)
		go func() {
			defer wg.Done()
			e := &Envelope{Type: TypeControl, Job: "keycount", From: from, To: "n1/c", Gen: 1,
				Payload: mustPack(t, map[string]any{"blob": bytes.Repeat([]byte{7}, 10_000)})}
			if err := pub.Publish(subj, e); err != nil {
				t.Errorf("publish from %s: %v", from, err)
			}
		}()
	}
	wg.Wait()
	stray := nats.NewMsg(subj)
	stray.Header.Set(HeaderPart, "2/3")
	stray.Header.Set(HeaderFrom, "n4/d")
	stray.Header.Set(HeaderTo, "n1/c")
	stray.Data = []byte{1, 2, 3}
	if err := nc.PublishMsg(stray); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "3 lines", func() bool { return len(out.Lines()) >= 3 })
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Inspect: %v", err)
	}
	lines := out.Lines()
	if len(lines) != 3 {
		t.Fatalf("%d lines, want 3:\n%s", len(lines), strings.Join(lines, "\n"))
	}
	froms := map[string]bool{}
	for _, l := range lines {
		var d struct {
			From  string `json:"from"`
			Bytes int    `json:"bytes"`
			Parts int    `json:"parts"`
			Error string `json:"error"`
		}
		if err := json.Unmarshal([]byte(l), &d); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		switch {
		case d.Error != "":
			if !strings.Contains(d.Error, "does not continue") {
				t.Errorf("stray part: %s", l)
			}
		case d.Parts < 3 || d.Bytes < 10_000:
			t.Errorf("want a joined envelope of ≥ 10000 bytes in ≥ 3 parts: %s", l)
		default:
			froms[d.From] = true
		}
	}
	if !froms["n2/a"] || !froms["n3/b"] {
		t.Errorf("joined envelopes from %v, want n2/a and n3/b:\n%s", froms, strings.Join(lines, "\n"))
	}
}
