package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/weirstream/weir/samples/jsbridge"
)

// TestJetStreamBridgeSurvivesANodeKill: three node processes; `node js-fill`
// fills a stream, a submitted jsbridge job reads it by four subject splits,
// counts per key and writes the counts to another stream; a node running
// its tasks is SIGKILLed mid-run. Its tasks restart on the others from the
// latest checkpoint, and the output stream holds every count exactly once.
func TestJetStreamBridgeSurvivesANodeKill(t *testing.T) {
	t.Parallel()
	const n, k = 300000, 100
	bin := buildNode(t)
	c := startCluster(t, bin, []string{"n1", "n2", "n3"}, nil, nil)
	fill := exec.Command(bin, "js-fill", "--nats", c.url, "--records", fmt.Sprint(n), "--keys", fmt.Sprint(k))
	if out, err := fill.CombinedOutput(); err != nil || !strings.Contains(string(out), fmt.Sprintf("published %d events", n)) {
		t.Fatalf("js-fill: %v\n%s", err, out)
	}
	_, sout, done := c.submitAttached("jsbridge", "--parallelism", "3", "--checkpoint-interval", "100ms",
		"--log-level", "warn", "--coordinator", "n2")
	s := c.waitCheckpoint("jsbridge", 2, "")
	onN3 := false
	for _, j := range s.Jobs {
		for _, node := range j.Tasks {
			onN3 = onN3 || node == "n3"
		}
	}
	if !onN3 {
		t.Fatalf("no task placed on n3: %+v", s.Jobs)
	}
	c.kill("n3")
	if err := waitSubmit(t, done, sout); err != nil {
		t.Fatalf("node submit after killing n3: %v\n%s", err, sout.String())
	}
	checkBridgeOutput(t, c.url, n, k)
}

// checkBridgeOutput demands that jsbridge's output stream holds, for each
// of k keys, the counts 1 … n/k once each and nothing else.
func checkBridgeOutput(t *testing.T, url string, n, k int) {
	t.Helper()
	js := connectJetStream(t, url)
	ctx, cancel := context.WithTimeout(context.Background(), clusterDeadline)
	defer cancel()
	stream, err := js.Stream(ctx, defaultOutStream)
	if err != nil {
		t.Fatal(err)
	}
	cons, err := stream.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[jsbridge.Count]int{}
	total := 0
	for {
		mb, err := cons.Fetch(1000, jetstream.FetchMaxWait(2*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		got := 0
		for m := range mb.Messages() {
			var cnt jsbridge.Count
			if err := json.Unmarshal(m.Data(), &cnt); err != nil {
				t.Fatalf("output %q: %v", m.Data(), err)
			}
			seen[cnt]++
			got++
		}
		total += got
		if got == 0 {
			break
		}
	}
	bad := 0
	for key := 0; key < k; key++ {
		for cnt := 1; cnt <= n/k; cnt++ {
			if times := seen[jsbridge.Count{Key: fmt.Sprintf("k%06d", key), Count: int64(cnt)}]; times != 1 && bad < 10 {
				t.Errorf("key k%06d count %d published %d times, want once", key, cnt, times)
				bad++
			}
		}
	}
	if total != n {
		t.Errorf("output stream holds %d messages, want %d", total, n)
	}
	t.Logf("output stream: %d messages, each count once", total)
}

// connectJetStream connects to the cluster's NATS server at url for the
// test's duration and returns its JetStream.
func connectJetStream(t *testing.T, url string) jetstream.JetStream {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return js
}
