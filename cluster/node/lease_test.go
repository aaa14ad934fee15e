package node

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"

	"github.com/weirstream/weir/cluster"
	"github.com/weirstream/weir/internal/poll"
)

// TestLeaseRenewedWhilePrepareWaits (issue 10 item 5): a node that is slow
// to prepare its part (here it never answers, so the coordinator waits for
// the whole prepare timeout) must not let the coordinator's lease lapse:
// renewal runs apart from setting the job up. Before, the lease of a job
// being set up was renewed by nobody and lapsed after one heartbeat timeout.
func TestLeaseRenewedWhilePrepareWaits(t *testing.T) {
	s := startNATS(t)
	connect := func() *nats.Conn {
		t.Helper()
		nc, err := nats.Connect(s.ClientURL())
		if err != nil {
			t.Fatal(err)
		}
		return nc
	}

	// "slow" is a live node (it heartbeats) that never answers a prepare.
	peer := connect()
	defer peer.Close()
	prepares := make(chan struct{}, 4)
	if _, err := peer.Subscribe(CmdSubject("slow"), func(*nats.Msg) { prepares <- struct{}{} }); err != nil {
		t.Fatal(err)
	}
	started := time.Now().UnixNano()
	stopHB := cluster.StartHeartbeats(peer, 50*time.Millisecond, func() cluster.Heartbeat {
		return cluster.Heartbeat{Node: "slow", Slots: 8, StartedUnixNano: started}
	}, zerolog.Nop())
	defer stopHB()

	const timeout = 400 * time.Millisecond
	nc := connect()
	defer nc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// One slot: the job's three tasks need the slow node too, so the
	// placement waits for it should a busy machine make it miss a heartbeat
	// timeout (with 8 slots the job was then placed on a alone, and no
	// prepare ever reached the slow node).
	a := startAgent(t, nc, "a", 1, timeout)

	if !poll.Until(20*time.Second, 10*time.Millisecond, func() bool { return a.isAlive("slow") }) {
		t.Fatal("the agent never saw the slow node")
	}
	client := connect()
	defer client.Close()
	if err := client.PublishRequest(SubmitSubject, nats.NewInbox(), Encode(SubmitRequest{Job: "keycount", Args: []string{"--records=100"}})); err != nil {
		t.Fatal(err)
	}
	select {
	case <-prepares:
	case <-time.After(20 * time.Second):
		t.Fatal("the coordinator never asked the slow node to prepare")
	}
	asked := time.Now()
	// Well past several heartbeat timeouts into the prepare, the lease is
	// still this coordinator's, renewed recently.
	renewed := func() bool {
		v, ok, err := a.leases.Get(ctx, "keycount")
		return err == nil && ok && v.Node == "a" && time.Unix(0, v.RenewedUnixNano).Sub(asked) > 3*timeout
	}
	if !poll.Until(20*time.Second, 20*time.Millisecond, renewed) {
		v, _, _ := a.leases.Get(ctx, "keycount")
		t.Fatalf("lease not renewed while the prepare waits: %+v (prepare asked at %v)", v, asked)
	}
	if !a.holds("keycount") {
		t.Fatal("the coordinator does not hold its lease while its prepare waits")
	}
	// End the wait: with its connection closed, the prepare fails at once.
	nc.Close()
	settled := func() bool {
		a.mu.Lock()
		defer a.mu.Unlock()
		return !a.core.Claimed("keycount")
	}
	if !poll.Until(20*time.Second, 10*time.Millisecond, settled) {
		t.Fatal("the submission did not end after the connection closed")
	}
}
