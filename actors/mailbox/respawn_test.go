package mailbox

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/asynkron/protoactor-go/actor"
)

// startOrderActor records whether any user message reached it before Started.
type startOrderActor struct {
	started bool
	early   *atomic.Int64
}

func (a *startOrderActor) Receive(ctx actor.Context) {
	switch ctx.Message().(type) {
	case *actor.Started:
		a.started = true
	case *actor.Stopping, *actor.Stopped:
	default:
		if !a.started {
			a.early.Add(1)
		}
	}
}

// TestRespawnUnderStaleSends: a stale PID of a stopped actor resolves by name
// to the actor respawned under that name, and protoactor publishes the new
// process before it registers the mailbox's handlers. A sender racing the
// respawn must neither crash the process (protoactor's default mailbox
// dereferences its nil dispatcher there) nor reach the new actor before its
// Started. The stand-ins of remote tasks are respawned under their names at
// every region restart while the job's flush ticker sends to their old PIDs.
func TestRespawnUnderStaleSends(t *testing.T) {
	sys := newSystem(t)
	var early atomic.Int64
	props := actor.PropsFromProducer(func() actor.Actor { return &startOrderActor{early: &early} },
		actor.WithMailbox(New(InOrder())))
	const name = "respawned"
	pid, err := sys.Root.SpawnNamed(props, name)
	if err != nil {
		t.Fatal(err)
	}
	stale := actor.NewPID(pid.Address, pid.Id)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
					sys.Root.Send(stale, "tick")
				}
			}
		}()
	}
	for i := range 2000 {
		if err := sys.Root.StopFuture(pid).Wait(); err != nil {
			t.Fatalf("stop %d: %v", i, err)
		}
		if pid, err = sys.Root.SpawnNamed(props, name); err != nil {
			t.Fatalf("respawn %d: %v", i, err)
		}
	}
	close(stop)
	wg.Wait()
	if n := early.Load(); n > 0 {
		t.Fatalf("%d messages reached a respawned actor before its Started", n)
	}
}
