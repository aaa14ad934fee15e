package transport

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/weirstream/weir/internal/natstest"
)

// TestPublishInParts: on a server that takes messages of at most 4 KB,
// two links publish, on one subject at once, envelopes of 1 byte to 40 KB
// (a removed sink instance's staged output, a key group's state): each
// larger one goes as parts of at most 4 KB, headers included, and the
// subscriber gets every envelope once, whole and as sent, in order per
// link with no gap in Seq.
func TestPublishInParts(t *testing.T) {
	const max = 4096
	s := natstest.Start(t, natstest.Options{MaxPayload: max})
	sub := s.Connect(t)
	var rec recorder
	if _, err := Subscribe(sub, JobWildcard("keycount"), rec.onGood, rec.onBad); err != nil {
		t.Fatal(err)
	}
	subj := ControlSubject("keycount", "n1")
	raw, err := sub.SubscribeSync(subj)
	if err != nil {
		t.Fatal(err)
	}
	if err := sub.Flush(); err != nil {
		t.Fatal(err)
	}
	sizes := []int{1, 40_000, 3_000, 4_100, 12_345, 0}
	sent := map[string][]Envelope{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, from := range []string{"n2/node/job-keycount/sink-1", "n3/node/job-keycount/sink-2"} {
		pub := NewPublisher(s.Connect(t))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i, n := range sizes {
				blob := bytes.Repeat([]byte{byte(i + 1)}, n)
				e := &Envelope{Type: TypeControl, Job: "keycount", From: from, To: "n1/node/job-keycount/sink-0", Gen: 1,
					Payload: mustPack(t, map[string]any{"from": from, "blob": blob})}
				if err := pub.Publish(subj, e); err != nil {
					t.Errorf("publish %d bytes: %v", n, err)
					return
				}
				mu.Lock()
				sent[from] = append(sent[from], *e)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	waitFor(t, "every envelope", func() bool { g, b := rec.counts(); return g+b == 2*len(sizes) })
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.bad) > 0 {
		t.Fatalf("bad messages: %v", rec.bad)
	}
	checker := NewSeqChecker()
	got := map[string][]Envelope{}
	for _, e := range rec.good {
		if v := checker.Check(LinkKey(e.From, e.To), e.Gen, e.Seq); v != InOrder {
			t.Errorf("%s seq %d: %v", e.From, e.Seq, v)
		}
		got[e.From] = append(got[e.From], *e)
	}
	if !reflect.DeepEqual(got, sent) {
		t.Fatalf("received envelopes differ from those sent (%d and %d links)", len(got), len(sent))
	}
	parts := 0
	for {
		m, err := raw.NextMsg(100 * time.Millisecond)
		if errors.Is(err, nats.ErrTimeout) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if size := headerLen(m.Header) + len(m.Data); size > max {
			t.Fatalf("a message of %d bytes on a server taking %d", size, max)
		}
		if m.Header.Get(HeaderPart) != "" {
			parts++
		}
	}
	if parts < 2*(10+2+4) { // 40 KB in ≥ 10 parts, 4.1 KB in 2, 12 KB in 4
		t.Fatalf("%d parts on the wire, want at least 32", parts)
	}
}

// partMsg is part i/n of seq on link from→n1/x with data.
func partMsg(from string, seq, gen, part string, data string) *nats.Msg {
	e := &Envelope{Type: TypeControl, Job: "j", From: from, To: "n1/x", Payload: []byte(data)}
	m := e.Msg("weir.j.ctl.n1")
	m.Header[HeaderSeq] = []string{seq}
	m.Header[HeaderGen] = []string{gen}
	if part != "" {
		m.Header[HeaderPart] = []string{part}
	}
	return m
}

// TestPartJoiner: parts are joined per link in order; a part that does
// not continue its link's envelope, or a bad Weir-Part, is malformed and
// drops the envelope; an envelope whose tail is lost is dropped when the
// link's next one begins; a message that is not a part passes as it is.
func TestPartJoiner(t *testing.T) {
	var j partJoiner
	step := func(m *nats.Msg) string {
		t.Helper()
		got, err := j.join(m)
		switch {
		case err != nil && !errors.Is(err, ErrMalformed):
			t.Fatalf("error %v does not wrap ErrMalformed", err)
		case err != nil:
			return "error: " + err.Error()
		case got == nil:
			return "wait"
		case got.Header.Get(HeaderPart) != "":
			return "joined with a part header"
		}
		return fmt.Sprintf("seq %s %q", got.Header.Get(HeaderSeq), got.Data)
	}
	for _, tc := range []struct {
		m    *nats.Msg
		want string
	}{
		{partMsg("a", "1", "0", "", "whole"), `seq 1 "whole"`},
		{partMsg("a", "2", "0", "1/3", "ab"), "wait"},
		{partMsg("b", "7", "0", "1/2", "x"), "wait"}, // another link between the parts
		{partMsg("a", "2", "0", "2/3", "cd"), "wait"},
		{partMsg("b", "7", "0", "2/2", "y"), `seq 7 "xy"`},
		{partMsg("a", "2", "0", "3/3", "e"), `seq 2 "abcde"`},
		// A part out of order drops its envelope.
		{partMsg("a", "3", "0", "1/3", "ab"), "wait"},
		{partMsg("a", "3", "0", "3/3", "e"), "error: weir message on \"weir.j.ctl.n1\": part 3/3 of seq 3 does not continue what link a→n1/x sent"},
		{partMsg("a", "3", "0", "2/3", "cd"), "error: weir message on \"weir.j.ctl.n1\": part 2/3 of seq 3 does not continue what link a→n1/x sent"},
		// Another seq or gen, or another count, does not continue it.
		{partMsg("a", "4", "0", "1/2", "ab"), "wait"},
		{partMsg("a", "5", "0", "2/2", "cd"), "error: weir message on \"weir.j.ctl.n1\": part 2/2 of seq 5 does not continue what link a→n1/x sent"},
		{partMsg("a", "4", "0", "1/2", "ab"), "wait"},
		{partMsg("a", "4", "1", "2/2", "cd"), "error: weir message on \"weir.j.ctl.n1\": part 2/2 of seq 4 does not continue what link a→n1/x sent"},
		{partMsg("a", "4", "0", "1/2", "ab"), "wait"},
		{partMsg("a", "4", "0", "2/3", "cd"), "error: weir message on \"weir.j.ctl.n1\": part 2/3 of seq 4 does not continue what link a→n1/x sent"},
		// A lost tail: the next envelope begins, the first is dropped.
		{partMsg("a", "6", "0", "1/2", "lost"), "wait"},
		{partMsg("a", "7", "0", "1/2", "ne"), "wait"},
		{partMsg("a", "7", "0", "2/2", "xt"), `seq 7 "next"`},
		{partMsg("a", "8", "0", "2/2", "xt"), "error: weir message on \"weir.j.ctl.n1\": part 2/2 of seq 8 does not continue what link a→n1/x sent"},
	} {
		if got := step(tc.m); !strings.HasPrefix(got, tc.want) {
			t.Fatalf("%s seq %s part %s: %s, want %s", tc.m.Header.Get(HeaderFrom), tc.m.Header.Get(HeaderSeq), tc.m.Header.Get(HeaderPart), got, tc.want)
		}
	}
	for _, bad := range []string{"0/2", "3/2", "1/1", "1/", "/2", "01/2", "1/02", "a/b", "1/65537", "-1/2", "1/2/3", "+1/2"} {
		if got := step(partMsg("c", "1", "0", bad, "x")); !strings.Contains(got, "want I/N") {
			t.Errorf("Weir-Part %q: %s", bad, got)
		}
	}
	m := partMsg("c", "1", "0", "1/2", "x")
	m.Header[HeaderPart] = []string{"1/2", "1/2"}
	if got := step(m); !strings.Contains(got, "want I/N") {
		t.Errorf("two Weir-Part values: %s", got)
	}
}

// TestSplitMsg: a message that fits goes whole; one that does not goes
// as parts that fit, whose data joined is the message's; headers that
// leave no room are an error.
func TestSplitMsg(t *testing.T) {
	e := &Envelope{Type: TypeControl, Job: "j", From: "a", To: "b", Seq: 1, Payload: bytes.Repeat([]byte("z"), 10_000)}
	m := e.Msg("weir.j.ctl.b")
	whole, err := splitMsg(m, 0)
	if err != nil || len(whole) != 1 || whole[0] != m {
		t.Fatalf("unknown max: %d messages, %v", len(whole), err)
	}
	if whole, err = splitMsg(m, int64(headerLen(m.Header)+len(m.Data))); err != nil || len(whole) != 1 {
		t.Fatalf("a message exactly at max: %d messages, %v", len(whole), err)
	}
	parts, err := splitMsg(m, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var joined []byte
	for i, p := range parts {
		if size := headerLen(p.Header) + len(p.Data); size > 1000 {
			t.Fatalf("part %d: %d bytes", i+1, size)
		}
		if got, want := p.Header.Get(HeaderPart), fmt.Sprintf("%d/%d", i+1, len(parts)); got != want {
			t.Fatalf("part %d: %s %q, want %q", i+1, HeaderPart, got, want)
		}
		joined = append(joined, p.Data...)
	}
	if !bytes.Equal(joined, m.Data) || len(parts) < 10 {
		t.Fatalf("%d parts join to %d bytes, want %d", len(parts), len(joined), len(m.Data))
	}
	if _, err := splitMsg(m, int64(headerLen(m.Header))); err == nil {
		t.Fatal("headers filling the whole message: no error")
	}
}
