package cluster

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

func TestExpired(t *testing.T) {
	now := time.Unix(100, 0)
	timeout := 3 * time.Second
	at := func(d time.Duration) int64 { return now.Add(d).UnixNano() }
	for _, tc := range []struct {
		name    string
		v       LeaseValue
		expired bool
		heldBy  string // node for which HeldBy is true, if any
	}{
		{"zero value (no lease)", LeaseValue{}, true, ""},
		{"released keeps epoch", LeaseValue{Epoch: 4}, true, ""},
		{"just renewed", LeaseValue{Node: "a", Epoch: 1, RenewedUnixNano: at(0)}, false, "a"},
		{"renewed in the future (clock skew)", LeaseValue{Node: "a", Epoch: 1, RenewedUnixNano: at(time.Second)}, false, "a"},
		{"exactly timeout old", LeaseValue{Node: "a", Epoch: 1, RenewedUnixNano: at(-timeout)}, false, "a"},
		{"just over timeout", LeaseValue{Node: "a", Epoch: 1, RenewedUnixNano: at(-timeout - 1)}, true, ""},
		{"long dead", LeaseValue{Node: "a", Epoch: 9, RenewedUnixNano: 1}, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Expired(tc.v, now, timeout); got != tc.expired {
				t.Fatalf("Expired = %v, want %v", got, tc.expired)
			}
			for _, n := range []string{"a", "b", ""} {
				if got := HeldBy(tc.v, n, now, timeout); got != (n != "" && n == tc.heldBy) {
					t.Fatalf("HeldBy(%q) = %v", n, got)
				}
			}
		})
	}
}

// contenders opens the lease bucket from n separate connections at once.
func contenders(t *testing.T, e *Embedded, n int) []*Leases {
	t.Helper()
	ctx := testCtx(t)
	out := make([]*Leases, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range out {
		js := newJS(t, e)
		wg.Go(func() { out[i], errs[i] = OpenLeases(ctx, js, DefaultLeaseBucket) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("OpenLeases: %v", err)
	}
	return out
}

// race runs Acquire for each node at once and returns who won.
func race(t *testing.T, ls []*Leases, job string, nodes []string, now time.Time, timeout time.Duration) []string {
	t.Helper()
	ctx := testCtx(t)
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		winners []string
		start   = make(chan struct{})
	)
	for i, node := range nodes {
		wg.Go(func() {
			<-start
			v, won, err := ls[i].Acquire(ctx, job, node, now, timeout)
			if err != nil {
				t.Errorf("Acquire by %s: %v", node, err)
				return
			}
			if won != (v.Node == node) {
				t.Errorf("Acquire by %s: won=%v but lease shows %+v", node, won, v)
			}
			if won {
				mu.Lock()
				winners = append(winners, node)
				mu.Unlock()
			}
		})
	}
	close(start)
	wg.Wait()
	return winners
}

func TestLeaseOneCoordinator(t *testing.T) {
	e := startServer(t, EmbedOptions{})
	ls := contenders(t, e, 3)
	ctx := testCtx(t)
	const timeout = 5 * time.Second
	t0 := time.Unix(1_000_000, 0)
	nodes := []string{"a", "b", "c"}

	for j := range 10 { // many jobs, so that both the create race and the CAS race happen
		job := fmt.Sprintf("job-%d", j)
		w := race(t, ls[:2], job, nodes[:2], t0, timeout)
		if len(w) != 1 {
			t.Fatalf("%s: first acquire winners %v, want exactly one", job, w)
		}
		holder := w[0]
		hi := map[string]int{"a": 0, "b": 1}[holder]
		v, ok, err := ls[2].Get(ctx, job)
		if err != nil || !ok || v.Node != holder || v.Epoch != 1 {
			t.Fatalf("%s: Get = %+v %v %v, want %s at epoch 1", job, v, ok, err, holder)
		}
		// A live lease cannot be taken.
		if v, won, err := ls[2].Acquire(ctx, job, "c", t0.Add(timeout), timeout); err != nil || won || v.Node != holder {
			t.Fatalf("%s: Acquire of live lease = %+v %v %v", job, v, won, err)
		}
		// The holder renews, keeping its epoch.
		if v, err := ls[hi].Renew(ctx, job, holder, t0.Add(time.Second)); err != nil || v.Epoch != 1 {
			t.Fatalf("%s: Renew = %+v %v", job, v, err)
		}
		// The loser never held it.
		loser := nodes[1-hi]
		if _, err := ls[1-hi].Renew(ctx, job, loser, t0.Add(time.Second)); !errors.Is(err, ErrLeaseLost) {
			t.Fatalf("%s: Renew by loser: %v, want ErrLeaseLost", job, err)
		}

		// The holder goes silent; after expiry the two others race to take over.
		later := t0.Add(time.Second + timeout + time.Millisecond)
		takers := []*Leases{ls[1-hi], ls[2]}
		w = race(t, takers, job, []string{loser, "c"}, later, timeout)
		if len(w) != 1 {
			t.Fatalf("%s: takeover winners %v, want exactly one", job, w)
		}
		v, _, _ = ls[2].Get(ctx, job)
		if v.Node != w[0] || v.Epoch != 2 {
			t.Fatalf("%s: after takeover lease = %+v, want %s at epoch 2", job, v, w[0])
		}
		// The old holder's renew fails: it must stop coordinating.
		if _, err := ls[hi].Renew(ctx, job, holder, later); !errors.Is(err, ErrLeaseLost) {
			t.Fatalf("%s: Renew by old holder: %v, want ErrLeaseLost", job, err)
		}
		if err := ls[hi].Release(ctx, job, holder); !errors.Is(err, ErrLeaseLost) {
			t.Fatalf("%s: Release by old holder: %v, want ErrLeaseLost", job, err)
		}
	}
}

// TestLeaseCASConflict forces two takeovers from the same seen revision:
// exactly one write succeeds.
func TestLeaseCASConflict(t *testing.T) {
	e := startServer(t, EmbedOptions{})
	ls := contenders(t, e, 3)
	ctx := testCtx(t)
	const timeout = time.Second
	t0 := time.Unix(1_000_000, 0)
	if _, won, err := ls[0].Acquire(ctx, "j1", "a", t0, timeout); err != nil || !won {
		t.Fatalf("Acquire: %v %v", won, err)
	}
	later := t0.Add(2 * timeout)
	cur, rev, ok, err := ls[1].get(ctx, "j1") // both contenders saw this revision
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	vb, wonB, errB := ls[1].acquireSeen(ctx, "j1", "b", "", later, timeout, cur, rev, true)
	vc, wonC, errC := ls[2].acquireSeen(ctx, "j1", "c", "", later, timeout, cur, rev, true)
	if errB != nil || errC != nil {
		t.Fatal(errB, errC)
	}
	if !wonB || wonC {
		t.Fatalf("b won %v, c won %v: want only b", wonB, wonC)
	}
	if vb != vc || vb.Node != "b" || vb.Epoch != 2 {
		t.Fatalf("b sees %+v, c sees %+v: want both to see b at epoch 2", vb, vc)
	}
	// Same for creating an absent lease.
	_, wonB, errB = ls[1].acquireSeen(ctx, "j2", "b", "", t0, timeout, LeaseValue{}, 0, false)
	vc, wonC, errC = ls[2].acquireSeen(ctx, "j2", "c", "", t0, timeout, LeaseValue{}, 0, false)
	if errB != nil || errC != nil || !wonB || wonC || vc.Node != "b" || vc.Epoch != 1 {
		t.Fatalf("create race: b %v %v, c %v %+v %v", wonB, errB, wonC, vc, errC)
	}
}

func TestLeaseReleaseAndEpochs(t *testing.T) {
	e := startServer(t, EmbedOptions{})
	ls := contenders(t, e, 2)
	ctx := testCtx(t)
	const timeout = time.Minute
	now := time.Unix(1_000_000, 0)

	if _, won, _ := ls[0].Acquire(ctx, "j", "a", now, timeout); !won {
		t.Fatal("a did not get a fresh lease")
	}
	// Renew keeps the epoch.
	if v, err := ls[0].Renew(ctx, "j", "a", now.Add(time.Second/4)); err != nil || v.Epoch != 1 {
		t.Fatalf("renew by holder: %+v %v", v, err)
	}
	// Acquire by the holder of the live lease starts a new coordinator of
	// the job (a same-name resubmit before the last one's lease was
	// released): a new epoch, which fences the old coordinator.
	if v, won, err := ls[0].Acquire(ctx, "j", "a", now.Add(time.Second/2), timeout); err != nil || !won || v.Epoch != 2 {
		t.Fatalf("re-acquire by holder: %+v %v %v, want a new epoch 2", v, won, err)
	}
	if ep, ok := ls[0].Holding("j", "a", now.Add(time.Second/2+timeout), timeout); !ok || ep != 2 {
		t.Fatalf("Holding just within the timeout of the re-acquire = %d, %v", ep, ok)
	}
	// A restarted process of the same node (new Leases) takes its node's
	// live lease over with a new epoch, which fences its old incarnation.
	if v, won, err := ls[1].Acquire(ctx, "j", "a", now.Add(time.Second), timeout); err != nil || !won || v.Epoch != 3 {
		t.Fatalf("re-acquire by a new incarnation of the holder: %+v %v %v", v, won, err)
	}
	// ls[0]'s revision is now stale: its Renew fails, and it no longer
	// holds the lease.
	if _, err := ls[0].Renew(ctx, "j", "a", now); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("stale Renew: %v", err)
	}
	if _, ok := ls[0].Holding("j", "a", now.Add(time.Second), timeout); ok {
		t.Fatal("the old incarnation still holds the lease after its renewal failed")
	}
	if ep, ok := ls[1].Holding("j", "a", now.Add(time.Second+timeout), timeout); !ok || ep != 3 {
		t.Fatalf("Holding by the new incarnation = %d, %v", ep, ok)
	}
	if _, ok := ls[1].Holding("j", "a", now.Add(time.Second+timeout+1), timeout); ok {
		t.Fatal("Holding past the timeout without a renewal")
	}
	if err := ls[1].Release(ctx, "j", "a"); err != nil {
		t.Fatal(err)
	}
	if err := ls[1].Release(ctx, "j", "a"); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("second Release: %v, want ErrLeaseLost", err)
	}
	v, ok, err := ls[0].Get(ctx, "j")
	if err != nil || !ok || v.Node != "" || v.Epoch != 3 {
		t.Fatalf("after release: %+v %v %v", v, ok, err)
	}
	// A released lease is taken at once, with a larger epoch.
	if v, won, err := ls[0].Acquire(ctx, "j", "b", now.Add(2*time.Second), timeout); err != nil || !won || v.Epoch != 4 {
		t.Fatalf("acquire after release: %+v %v %v", v, won, err)
	}
	// The holder's own expired lease is a new term: the epoch grows.
	if v, won, err := ls[0].Acquire(ctx, "j", "b", now.Add(time.Hour), timeout); err != nil || !won || v.Epoch != 5 {
		t.Fatalf("re-acquire of own expired lease: %+v %v %v", v, won, err)
	}
	if _, _, err := ls[0].Acquire(ctx, "bad job!", "b", now, timeout); err == nil {
		t.Fatal("job name with spaces accepted")
	}
	if _, _, err := ls[0].Acquire(ctx, "j", "", now, timeout); err == nil {
		t.Fatal("empty node accepted")
	}
}

func TestLeaseCorruptValueIsTakenOver(t *testing.T) {
	e := startServer(t, EmbedOptions{})
	js := newJS(t, e)
	ctx := testCtx(t)
	l, err := OpenLeases(ctx, js, "leases")
	if err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue(ctx, "leases")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 { // push the revision up
		if _, err := kv.Put(ctx, fmt.Sprintf("other-%d", i), []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	rev, err := kv.Put(ctx, "j", []byte("\xc1 not msgpack"))
	if err != nil {
		t.Fatal(err)
	}
	v, won, err := l.Acquire(ctx, "j", "a", time.Now(), time.Second)
	if err != nil || !won || v.Epoch != rev+1 {
		t.Fatalf("Acquire over corrupt value: %+v %v %v; want epoch %d", v, won, err, rev+1)
	}
}

func TestOpenLeasesExistingBucket(t *testing.T) {
	e := startServer(t, EmbedOptions{})
	js := newJS(t, e)
	ctx := testCtx(t)
	if _, err := js.CreateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: "pre", History: 10}); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenLeases(ctx, js, "pre"); err != nil {
		t.Fatalf("OpenLeases on an existing bucket: %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := OpenLeases(cctx, js, "other"); err == nil {
		t.Fatal("OpenLeases with a cancelled context succeeded")
	}
}

// A live lease is taken over before it expires only from the node named
// dead (its connection closed); the new epoch makes the old holder's
// renewals fail.
func TestLeaseTakeOverFromDeadHolder(t *testing.T) {
	e := startServer(t, EmbedOptions{})
	ls := contenders(t, e, 3)
	ctx := testCtx(t)
	const timeout = time.Minute
	now := time.Unix(1_000_000, 0)
	if v, won, err := ls[0].Acquire(ctx, "j", "a", now, timeout); err != nil || !won || v.Epoch != 1 {
		t.Fatalf("a acquires: %+v %v %v", v, won, err)
	}
	// Live and held by a: neither a plain acquire nor a takeover naming
	// another node takes it.
	if v, won, err := ls[1].Acquire(ctx, "j", "b", now.Add(time.Second), timeout); err != nil || won || v.Node != "a" {
		t.Fatalf("b acquires a's live lease: %+v %v %v", v, won, err)
	}
	if v, won, err := ls[1].TakeOver(ctx, "j", "b", "c", now.Add(time.Second), timeout); err != nil || won || v.Node != "a" {
		t.Fatalf("b takes over from c a lease a holds: %+v %v %v", v, won, err)
	}
	// a's connection closed: b takes its live lease over at once.
	v, won, err := ls[1].TakeOver(ctx, "j", "b", "a", now.Add(time.Second), timeout)
	if err != nil || !won || v.Node != "b" || v.Epoch != 2 {
		t.Fatalf("b takes over from dead a: %+v %v %v", v, won, err)
	}
	// Of two nodes that both saw a dead, one only wins (b already did).
	if v, won, err := ls[2].TakeOver(ctx, "j", "c", "a", now.Add(time.Second), timeout); err != nil || won || v.Node != "b" {
		t.Fatalf("c takes over after b: %+v %v %v", v, won, err)
	}
	if _, err := ls[0].Renew(ctx, "j", "a", now.Add(2*time.Second)); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("the old holder's renewal after the takeover: %v, want ErrLeaseLost", err)
	}
	if ep, ok := ls[1].Holding("j", "b", now.Add(2*time.Second), timeout); !ok || ep != 2 {
		t.Fatalf("Holding by the new holder = %d, %v", ep, ok)
	}
}
