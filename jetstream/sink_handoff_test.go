package jetstream

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/internal/natstest"
)

// openSink opens instance i of sink "sink" of job "j" with checkpoints,
// publishing to the stream OUT (out.>).
func openSink(t *testing.T, srv *natstest.Server, i int) *sink[[]byte] {
	t.Helper()
	s := &sink[[]byte]{cfg: SinkConfig[[]byte]{Conn: Conn{NC: srv.Connect(t)}, Stream: "OUT", Subject: "out.x"}}
	if err := s.Open(weir.TaskInfo{Job: "j", Operator: "sink", Instance: i, Parallelism: 3, Checkpointing: true}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// outByWriter counts OUT's messages per Weir-Sink value and payload.
func outByWriter(t *testing.T, js jetstream.JetStream) map[string]map[string]int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := js.Stream(ctx, "OUT")
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]int{}
	if info.State.Msgs == 0 {
		return out
	}
	cons, err := st.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	for n := uint64(0); n < info.State.Msgs; {
		mb, err := cons.Fetch(int(info.State.Msgs-n), jetstream.FetchMaxWait(time.Second))
		if err != nil {
			t.Fatal(err)
		}
		for m := range mb.Messages() {
			w := m.Headers().Get(HeaderSink)
			if out[w] == nil {
				out[w] = map[string]int{}
			}
			out[w][string(m.Data())]++
			n++
		}
	}
	return out
}

// TestTakenOverBatchSurvivesANewInstanceOfTheRemovedNumber: instance 2
// seals a batch and is removed; instance 0 takes it over. A later rescale
// adds an instance 2 again, which seals its first checkpoint before
// instance 0 publishes the adopted batch. Restoring that checkpoint, the
// new instance 2 deletes the messages under its identity that it does not
// hold: the adopted batch must not be among them. (Published under the
// removed instance's identity, it was deleted and lost.)
func TestTakenOverBatchSurvivesANewInstanceOfTheRemovedNumber(t *testing.T) {
	srv := natstest.Start(t, natstest.Options{JetStream: true})
	js := srv.JetStream(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "OUT", Subjects: []string{"out.>"}}); err != nil {
		t.Fatal(err)
	}
	zero, removed := openSink(t, srv, 0), openSink(t, srv, 2)
	if err := removed.Write([][]byte{[]byte("a"), []byte("b")}); err != nil {
		t.Fatal(err)
	}
	if _, err := removed.PrepareCommit(5); err != nil {
		t.Fatal(err)
	}
	if err := removed.Write([][]byte{[]byte("c")}); err != nil { // staged after checkpoint 5
		t.Fatal(err)
	}
	h, err := removed.HandOff()
	if err != nil {
		t.Fatal(err)
	}
	if err := zero.TakeOver(h); err != nil {
		t.Fatal(err)
	}
	if _, err := zero.PrepareCommit(6); err != nil {
		t.Fatal(err)
	}
	again := openSink(t, srv, 2)
	state7, err := again.PrepareCommit(7)
	if err != nil {
		t.Fatal(err)
	}
	if err := zero.Commit(6); err != nil {
		t.Fatal(err)
	}
	if err := again.Recover(7, state7); err != nil {
		t.Fatal(err)
	}
	got := outByWriter(t, js)
	total := map[string]int{}
	for _, byData := range got {
		for d, n := range byData {
			total[d] += n
		}
	}
	for _, d := range []string{"a", "b", "c"} {
		if total[d] != 1 {
			t.Fatalf("message %q is in OUT %d times, want once: %v", d, total[d], got)
		}
	}
	if len(got["j/sink/0"]) != 3 {
		t.Fatalf("instance 0 published %v under its identity, want the adopted batch and the records staged after it: %v", got["j/sink/0"], got)
	}
}
