package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/weirstream/weir/transport"
)

// TestClusterBadInputIsCountedNotFatal publishes garbage, truncated msgpack,
// an unknown message type and out-of-sequence messages on a running job's
// subjects: no node crashes, `node status` counts them, and the output is
// still exactly once (a sequence gap makes the receiver restart from the
// latest checkpoint).
func TestClusterBadInputIsCountedNotFatal(t *testing.T) {
	t.Parallel()
	bin := buildNode(t)
	c := startCluster(t, bin, []string{"n1", "n2", "n3"}, nil, nil)
	out := filepath.Join(c.dir, "out.jsonl")
	const n, k = 300000, 100
	_, sout, done := c.submitAttached(keycountArgs(out, n, k)...)
	c.waitCheckpoint("keycount", 1, "")

	nc, err := nats.Connect(c.url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	data := transport.DataSubject("keycount", 1, 0, 0)
	pub := func(m *nats.Msg) {
		t.Helper()
		if err := nc.PublishMsg(m); err != nil {
			t.Fatal(err)
		}
	}
	// Garbage without headers.
	pub(&nats.Msg{Subject: data, Data: []byte("not a weir message")})
	// A buffer whose payload is truncated msgpack.
	trunc := (&transport.Envelope{Type: transport.TypeBuffer, Job: "keycount", From: "intruder#data",
		To: "node/job-keycount/sink-0/in-count-0", Seq: 1}).Msg(data)
	trunc.Data = []byte{0x82, 0xa1, 'k'}
	pub(trunc)
	// An unknown message type.
	unknown := (&transport.Envelope{Type: transport.TypeControl, Job: "keycount", From: "intruder#ctl", Seq: 1}).Msg(data)
	unknown.Header.Set(transport.HeaderType, "launch-missiles")
	pub(unknown)
	// A message without an epoch: malformed for a cluster job. Sent before
	// the gap, which restarts the receiver: messages still queued in a
	// subscription the restart replaces are discarded, never counted.
	unstamped := (&transport.Envelope{Type: transport.TypeEOS, Job: "keycount", From: "intruder2#data",
		To: "node/job-keycount/sink-0/in-count-0", Seq: 1, Payload: []byte{0x81, 0xa1, 'k', 0xa3, 'e', 'o', 's'}}).Msg(data)
	pub(unstamped)
	// Out of sequence: the link's first message claims seq 7. It carries
	// the coordinator's epoch (1), as every message of a cluster job does.
	gap := (&transport.Envelope{Type: transport.TypeEOS, Job: "keycount", From: "intruder#data",
		To: "node/job-keycount/sink-0/in-count-0", Seq: 7,
		Payload: []byte{0x82, 0xa1, 'k', 0xa3, 'e', 'o', 's', 0xa5, 'e', 'p', 'o', 'c', 'h', 0x01}}).Msg(data)
	pub(gap)
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}

	c.waitStatus("the bad input counted", func(s statusView) bool {
		var mal, unk, seq uint64
		for _, n := range s.Nodes {
			if n.BadInput != nil {
				mal, unk, seq = mal+n.BadInput.Malformed, unk+n.BadInput.UnknownType, seq+n.BadInput.BadSeq
			}
		}
		return mal >= 3 && unk >= 1 && seq >= 1
	})
	// A status that waits longer for the answers than the poll above.
	if live := c.status().liveNodes(); len(live) != 3 {
		t.Fatalf("a node died from bad input: %v answered", live)
	}
	if err := waitSubmit(t, done, sout); err != nil {
		t.Fatalf("node submit: %v\n%s", err, sout.String())
	}
	verifyKeycount(t, out, n, k)
	logs := ""
	for _, node := range c.nodes {
		logs += node.stderr.String()
	}
	for _, want := range []string{"bad message on the wire", data} {
		if !strings.Contains(logs, want) {
			t.Fatalf("the nodes' logs do not mention %q", want)
		}
	}
}
