package actors

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/weirstream/weir/internal/logbuf"
	"github.com/weirstream/weir/internal/plan"
)

// gatedJob submits src → sink on n, the sink blocked in its first Write
// until the returned release is called: the source fills the channel and
// then waits for credit.
func gatedJob(t *testing.T, n *Node) (*Job, func()) {
	t.Helper()
	const records = 100000
	rec := newRecorder(records)
	rec.gate = make(chan struct{})
	b := newPlan("backpressured")
	src := b.source("src", 1, records)
	sink := b.op("sink", plan.KindSink, 1, func(instance int) (plan.Instance, error) {
		return &recordingSink{rec: rec, instance: instance, srcP: 1, failAt: -1}, nil
	})
	b.connect(src, sink, plan.Forward)
	j, err := n.Submit(b.job, Options{BatchSize: 8, ChannelCapacity: 4, DeliveryWindow: 2})
	if err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	release := func() { once.Do(func() { close(rec.gate) }) }
	t.Cleanup(func() {
		release()
		if err := waitJob(t, j); err != nil {
			t.Errorf("job: %v", err)
		}
	})
	return j, release
}

// stalledView finds, in a dump, the source's phase and the sink's channel.
func stalledView(d *JobDump) (srcPhase string, ch *ChannelDump) {
	for _, td := range d.Tasks {
		switch td.Task {
		case "src[0]":
			srcPhase = td.Phase
		case "sink[0]":
			if len(td.Inputs) == 1 {
				ch = td.Inputs[0].Channel
			}
		}
	}
	return srcPhase, ch
}

func TestDumpNamesBlockedTaskAndNonEmptyChannel(t *testing.T) {
	n := startNode(t)
	j, _ := gatedJob(t, n)
	var d *JobDump
	waitUntil(t, "a dump with the source blocked and the channel full", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		var err error
		if d, err = j.Dump(ctx); err != nil {
			t.Fatal(err)
		}
		// A dump asks the coordinator first and the tasks after, so an early
		// one can show the coordinator before wiring and the tasks after it:
		// wait for the settled picture, in which nothing moves any more.
		phase, ch := stalledView(d)
		c := d.Coordinator
		return phase == PhaseBlocked && ch != nil && ch.Queued+ch.Unacked == 4 &&
			c != nil && c.Wired && sinkPhase(d) == PhaseNotAnswering
	})
	_, ch := stalledView(d)
	if ch.Channel != "src[0]→sink[0]" || ch.Credit != 0 || ch.Unacked != 2 || ch.Queued != 2 {
		t.Errorf("channel %+v, want src[0]→sink[0] with 2 delivered, 2 queued and no credit left", ch)
	}
	if !d.Busy() {
		t.Errorf("a backpressured job's dump is not busy: %+v", d)
	}
	if c := d.Coordinator; c == nil || !c.Wired || c.Tasks != 2 {
		t.Errorf("coordinator %+v, want 2 tasks wired", c)
	}
}

// sinkPhase is the phase the dump gives sink[0].
func sinkPhase(d *JobDump) string {
	for _, td := range d.Tasks {
		if td.Task == "sink[0]" {
			return td.Phase
		}
	}
	return ""
}

func TestStalledJobLogsItsDump(t *testing.T) {
	var logs logbuf.Buffer
	n := NewNode(zerolog.New(&logs))
	t.Cleanup(n.Shutdown)
	n.stallAfter = 300 * time.Millisecond
	gatedJob(t, n)
	waitUntil(t, "the stall to be logged with the blocked source", func() bool {
		for _, line := range strings.Split(logs.String(), "\n") {
			if strings.Contains(line, "job makes no progress") && strings.Contains(line, `"phase":"blocked on credit"`) &&
				strings.Contains(line, `"channel":"src[0]→sink[0]"`) {
				return true
			}
		}
		return false
	})
}
