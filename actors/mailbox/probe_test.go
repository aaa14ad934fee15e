package mailbox

import (
	"testing"

	"github.com/asynkron/protoactor-go/actor"
)

// TestProbeSeesPriorityAndSystemMessages blocks an actor inside a message and
// checks its probe: a queued normal message does not count, a queued priority
// message and a queued system message (a stop) do, and nothing counts once
// they are taken.
func TestProbeSeesPriorityAndSystemMessages(t *testing.T) {
	var nilProbe *Probe
	if nilProbe.Waiting() {
		t.Fatal("a nil probe reports waiting messages")
	}
	sys := newSystem(t)
	probe := &Probe{}
	if probe.Waiting() {
		t.Fatal("a probe without a mailbox reports waiting messages")
	}
	entered, release := make(chan any, 16), make(chan struct{})
	props := actor.PropsFromFunc(func(ctx actor.Context) {
		switch m := ctx.Message().(type) {
		case data, barrier:
			entered <- m
			if m == data(0) {
				<-release
			}
		}
	}, actor.WithMailbox(New(WithProbe(probe))))
	pid := sys.Root.Spawn(props)
	sys.Root.Send(pid, data(0))
	recv(t, entered, "data(0) entered")
	sys.Root.Send(pid, data(1))
	if probe.Waiting() {
		t.Fatal("a queued normal message counts as waiting")
	}
	sys.Root.Send(pid, barrier(1))
	if !probe.Waiting() {
		t.Fatal("a queued priority message does not count as waiting")
	}
	close(release)
	recvN(t, entered, 2, "barrier(1) and data(1)")
	if probe.Waiting() {
		t.Fatal("waiting after every message was taken")
	}

	block := make(chan struct{})
	stopper := &Probe{}
	pid2 := sys.Root.Spawn(actor.PropsFromFunc(func(ctx actor.Context) {
		if ctx.Message() == data(0) {
			entered <- data(0)
			<-block
		}
	}, actor.WithMailbox(New(WithProbe(stopper)))))
	sys.Root.Send(pid2, data(0))
	recv(t, entered, "data(0) entered the second actor")
	sys.Root.Stop(pid2)
	if !stopper.Waiting() {
		t.Fatal("a queued stop does not count as waiting")
	}
	close(block)
}
