package cluster

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"
)

func sampleHeartbeat() Heartbeat {
	return Heartbeat{
		Node: "n1", Slots: 8, Used: 3,
		Jobs:        []string{"j1", "j2"},
		Coordinates: []string{"j1"},
		Tasks:       map[string]int{"j1": 2, "j2": 1},
		Held: []HeldState{{Job: "j1", Operator: "count", Checkpoint: 7,
			KeyGroups: [][2]int{{0, 31}, {64, 95}}, KeyGroupBytes: 6400, Bytes: 6500}},
		Restored: []RestoredState{{Job: "j1", Restores: 2, LocalBytes: 6400, RemoteBytes: 100,
			LocalSections: 2, RemoteSections: 1, TookMs: 3.5, SpanMs: 2.5, Decoded: 1, DecodedMs: 2, DecodedSpanMs: 4}},
		StartedUnixNano: 100, SentUnixNano: 200,
	}
}

func TestHeartbeatCodec(t *testing.T) {
	hb := sampleHeartbeat()
	b, err := EncodeHeartbeat(hb)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeHeartbeat(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, hb) {
		t.Fatalf("round trip: got %+v, want %+v", got, hb)
	}
	j, err := json.Marshal(hb)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(j), `"key_groups":[[0,31],[64,95]]`) {
		t.Fatalf("JSON %s lacks key groups", j)
	}
	if !strings.Contains(string(j), `"restores":[{"job":"j1","task_restores":2,"local_bytes":6400,"remote_bytes":100,"local_sections":2,"remote_sections":1,"took_ms":3.5,"span_ms":2.5,"decoded_restores":1,"decoded_ms":2,"decoded_span_ms":4}]`) {
		t.Fatalf("JSON %s lacks restores", j)
	}
}

func TestDecodeHeartbeatRejects(t *testing.T) {
	enc := func(v any) []byte {
		b, err := msgpack.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	bad := func(mut func(*Heartbeat)) []byte {
		hb := sampleHeartbeat()
		mut(&hb)
		return enc(&hb)
	}
	for name, b := range map[string][]byte{
		"empty":                    nil,
		"garbage":                  []byte("not msgpack at all \xff\xfe"),
		"truncated":                enc(sampleHeartbeat())[:10],
		"wrong type":               enc(map[string]any{"node": 42}),
		"no node":                  bad(func(h *Heartbeat) { h.Node = "" }),
		"dotted node":              bad(func(h *Heartbeat) { h.Node = "a.b" }),
		"wildcard node":            bad(func(h *Heartbeat) { h.Node = "*" }),
		"negative slots":           bad(func(h *Heartbeat) { h.Slots = -1 }),
		"reversed range":           bad(func(h *Heartbeat) { h.Held[0].KeyGroups[0] = [2]int{9, 3} }),
		"negative group":           bad(func(h *Heartbeat) { h.Held[0].KeyGroups[0] = [2]int{-1, 3} }),
		"negative bytes":           bad(func(h *Heartbeat) { h.Held[0].Bytes = -1 }),
		"groups > total":           bad(func(h *Heartbeat) { h.Held[0].KeyGroupBytes = 7000 }),
		"negative restores":        bad(func(h *Heartbeat) { h.Restored[0].Restores = -1 }),
		"negative local bytes":     bad(func(h *Heartbeat) { h.Restored[0].LocalBytes = -1 }),
		"negative remote bytes":    bad(func(h *Heartbeat) { h.Restored[0].RemoteBytes = -5 }),
		"negative local sections":  bad(func(h *Heartbeat) { h.Restored[0].LocalSections = -1 }),
		"negative remote sections": bad(func(h *Heartbeat) { h.Restored[0].RemoteSections = -1 }),
		"negative restore time":    bad(func(h *Heartbeat) { h.Restored[0].TookMs = -0.5 }),
		"negative restore span":    bad(func(h *Heartbeat) { h.Restored[0].SpanMs = -1 }),
		"job tasks > used":         bad(func(h *Heartbeat) { h.Tasks["j1"] = 4 }),
		"negative tasks":           bad(func(h *Heartbeat) { h.Tasks["j2"] = -1 }),
		"array not a map":          enc([]int{1, 2, 3}),
	} {
		if _, err := DecodeHeartbeat(b); err == nil {
			t.Errorf("%s: decoded without error", name)
		}
	}
}

func TestHeartbeatSubjects(t *testing.T) {
	if got := HeartbeatSubject("n1"); got != "weir.node.n1.hb" {
		t.Fatalf("HeartbeatSubject = %s", got)
	}
	for subj, want := range map[string]string{
		"weir.node.n1.hb": "n1", "weir.node..hb": "", "weir.node.a.b.hb": "", "weir.x.n1.hb": "",
	} {
		got, _ := nodeOfSubject(subj)
		if got != want {
			t.Errorf("nodeOfSubject(%s) = %q, want %q", subj, got, want)
		}
	}
}

// TestHeartbeatSenderNow: a sender whose period is an hour sends its
// first heartbeat at once and another one each time it is asked to (a node
// joined), not a period later.
func TestHeartbeatSenderNow(t *testing.T) {
	e := startServer(t, EmbedOptions{})
	pub := connect(t, ConnOptions{URL: e.ClientURL()})
	watch := connect(t, ConnOptions{URL: e.ClientURL()})
	var mu sync.Mutex
	got := 0
	sub, err := WatchHeartbeats(watch, func(Heartbeat) { mu.Lock(); got++; mu.Unlock() }, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	if err := watch.Flush(); err != nil {
		t.Fatal(err)
	}
	count := func() int { mu.Lock(); defer mu.Unlock(); return got }
	s := StartHeartbeatSender(pub, time.Hour, sampleHeartbeat, testLog(t))
	defer s.Stop()
	eventually(t, 10*time.Second, "the first heartbeat", func() bool { return count() == 1 })
	for want := 2; want <= 3; want++ {
		s.Now()
		eventually(t, 10*time.Second, fmt.Sprintf("heartbeat %d, asked for", want), func() bool { return count() == want })
	}
	s.Stop()
	s.Stop() // idempotent
	s.Now()  // after Stop: nothing, and no block
}

func TestHeartbeatsOverNATS(t *testing.T) {
	e := startServer(t, EmbedOptions{})
	pub := connect(t, ConnOptions{URL: e.ClientURL()})
	watch := connect(t, ConnOptions{URL: e.ClientURL()})

	var (
		mu      sync.Mutex
		got     []Heartbeat
		bads    []string
		members = NewMembers(time.Second)
		joined  []string
	)
	sub, err := WatchHeartbeats(watch, func(hb Heartbeat) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, hb)
		if members.Observe(hb, time.Now()) {
			joined = append(joined, hb.Node)
		}
	}, func(subject string, err error) {
		mu.Lock()
		defer mu.Unlock()
		bads = append(bads, subject+": "+err.Error())
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	if err := watch.Flush(); err != nil {
		t.Fatal(err)
	}

	var calls sync.Mutex
	n := 0
	stop := StartHeartbeats(pub, 20*time.Millisecond, func() Heartbeat {
		calls.Lock()
		n++
		calls.Unlock()
		hb := sampleHeartbeat()
		hb.Used = n
		return hb
	}, testLog(t))
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(got) }
	eventually(t, 10*time.Second, "3 heartbeats", func() bool { return count() >= 3 })
	stop()
	stop() // idempotent
	calls.Lock()
	after := n
	calls.Unlock()

	// Malformed heartbeats go to bad and never to h.
	if err := pub.Publish(HeartbeatSubject("n9"), []byte("\xc1garbage")); err != nil {
		t.Fatal(err)
	}
	spoof, _ := EncodeHeartbeat(Heartbeat{Node: "n2", Slots: 1})
	if err := pub.Publish(HeartbeatSubject("n3"), spoof); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "2 bad heartbeats", func() bool { mu.Lock(); defer mu.Unlock(); return len(bads) == 2 })

	mu.Lock()
	defer mu.Unlock()
	for _, hb := range got {
		if hb.Node != "n1" {
			t.Fatalf("malformed heartbeat reached h: %+v", hb)
		}
	}
	if !strings.Contains(bads[0], "weir.node.n9.hb") || !strings.Contains(bads[1], `"n2" on the subject of node "n3"`) {
		t.Fatalf("bad reports: %q", bads)
	}
	if len(joined) != 1 || joined[0] != "n1" {
		t.Fatalf("joined = %v, want [n1]", joined)
	}
	for i := 1; i < len(got); i++ {
		if got[i].SentUnixNano <= got[i-1].SentUnixNano || got[i].Used != got[i-1].Used+1 {
			t.Fatalf("heartbeats out of order or not stamped: %+v then %+v", got[i-1], got[i])
		}
	}
	calls.Lock()
	defer calls.Unlock()
	if n != after {
		t.Fatalf("build called after stop returned (%d -> %d)", after, n)
	}
}
