package cluster

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/vmihailenco/msgpack/v5"
)

// DefaultLeaseBucket is the KV bucket that holds the coordinator leases.
const DefaultLeaseBucket = "weir-leases"

// ErrLeaseLost is returned by Renew and Release when the caller no longer
// holds the lease: another node took it, or it was never acquired through
// these Leases. The caller must stop acting as coordinator.
var ErrLeaseLost = errors.New("lease lost")

// LeaseValue is the content of a job's lease. Node is empty after Release.
type LeaseValue struct {
	Node            string `msgpack:"node" json:"node"`
	Epoch           uint64 `msgpack:"epoch" json:"epoch"`
	RenewedUnixNano int64  `msgpack:"renewed" json:"renewed_unix_nano"`
}

// Expired reports whether a lease seen with value v at now may be taken
// over: it was released, or not renewed for longer than timeout.
func Expired(v LeaseValue, now time.Time, timeout time.Duration) bool {
	return v.Node == "" || now.Sub(time.Unix(0, v.RenewedUnixNano)) > timeout
}

// HeldBy reports whether node may act on lease v at now: it holds it and
// its last renewal is not older than timeout.
func HeldBy(v LeaseValue, node string, now time.Time, timeout time.Duration) bool {
	return node != "" && v.Node == node && !Expired(v, now, timeout)
}

// encodeLease encodes a lease value.
func encodeLease(v LeaseValue) ([]byte, error) { return msgpack.Marshal(&v) }

// decodeLease decodes a lease value.
func decodeLease(b []byte) (LeaseValue, error) {
	var v LeaseValue
	if err := msgpack.Unmarshal(b, &v); err != nil {
		return LeaseValue{}, fmt.Errorf("decode lease (%d bytes): %w", len(b), err)
	}
	return v, nil
}

// Leases decides one coordinator per job with compare-and-set writes to a
// JetStream KV bucket (see the package documentation). It is safe for
// concurrent use.
type Leases struct {
	kv   jetstream.KeyValue
	mu   sync.Mutex
	held map[holder]held // leases as last written through these Leases
}

// held is a lease we wrote: its revision, epoch and renewal time.
type held struct {
	rev, epoch uint64
	renewed    int64 // RenewedUnixNano written
}

// holder identifies a lease held through these Leases.
type holder struct{ job, node string }

// OpenLeases opens the lease bucket, creating it when missing.
func OpenLeases(ctx context.Context, js jetstream.JetStream, bucket string) (*Leases, error) {
	kv, err := openKV(ctx, js, jetstream.KeyValueConfig{
		Bucket:      bucket,
		Description: "weir: coordinator lease per job",
		History:     4,
	})
	if err != nil {
		return nil, err
	}
	return &Leases{kv: kv, held: make(map[holder]held)}, nil
}

// Get returns the current lease of job; false when there is none.
func (l *Leases) Get(ctx context.Context, job string) (LeaseValue, bool, error) {
	v, _, ok, err := l.get(ctx, job)
	return v, ok, err
}

// get reads the lease with its revision. A value that does not decode is
// reported as an expired lease whose epoch is the revision: epochs never
// exceed the key's revision, so a takeover still gets a larger epoch.
func (l *Leases) get(ctx context.Context, job string) (LeaseValue, uint64, bool, error) {
	if err := checkKey(job); err != nil {
		return LeaseValue{}, 0, false, err
	}
	e, err := l.kv.Get(ctx, job)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return LeaseValue{}, 0, false, nil
	}
	if err != nil {
		return LeaseValue{}, 0, false, fmt.Errorf("get lease of job %s: %w", job, err)
	}
	v, err := decodeLease(e.Value())
	if err != nil {
		v = LeaseValue{Epoch: e.Revision()}
	}
	return v, e.Revision(), true, nil
}

// Acquire tries to make node a new coordinator of job. It creates the lease
// when absent (epoch 1), takes it over when Expired or when node itself
// holds it (epoch+1 either way: each coordinator a node starts, even for a
// job of the same name before the last one's lease was released, has an
// epoch of its own that fences the ones before), and otherwise leaves it.
// It returns the lease as it is now and whether node holds it. Losing a
// race is not an error. Renew, not Acquire, keeps a coordinator's epoch.
func (l *Leases) Acquire(ctx context.Context, job, node string, now time.Time, timeout time.Duration) (LeaseValue, bool, error) {
	return l.TakeOver(ctx, job, node, "", now, timeout)
}

// TakeOver is Acquire that also takes over a live lease held by dead, a
// node declared dead because its connection closed, without waiting for
// the lease to expire (epoch+1: the new epoch fences dead, should it still
// act). dead "" takes over expired leases only, as Acquire.
func (l *Leases) TakeOver(ctx context.Context, job, node, dead string, now time.Time, timeout time.Duration) (LeaseValue, bool, error) {
	if node == "" {
		return LeaseValue{}, false, errors.New("acquire lease: empty node id")
	}
	cur, rev, ok, err := l.get(ctx, job)
	if err != nil {
		return LeaseValue{}, false, err
	}
	return l.acquireSeen(ctx, job, node, dead, now, timeout, cur, rev, ok)
}

// acquireSeen is TakeOver after the lease was read as cur at revision rev
// (present tells whether the key existed).
func (l *Leases) acquireSeen(ctx context.Context, job, node, dead string, now time.Time, timeout time.Duration,
	cur LeaseValue, rev uint64, present bool) (LeaseValue, bool, error) {
	next := LeaseValue{Node: node, Epoch: 1, RenewedUnixNano: now.UnixNano()}
	switch {
	case !present:
	case dead != "" && dead != node && cur.Node == dead:
		next.Epoch = cur.Epoch + 1 // the holder's connection closed
	case cur.Node == node:
		// node's own live lease: written by an earlier coordinator of
		// the job here (not yet released) or by an earlier incarnation
		// of node (a restart with the same id). Either way this is a new
		// coordinator, so a new epoch that fences the old one.
		next.Epoch = cur.Epoch + 1
	case Expired(cur, now, timeout):
		next.Epoch = cur.Epoch + 1
	default:
		return cur, false, nil
	}
	b, err := encodeLease(next)
	if err != nil {
		return LeaseValue{}, false, fmt.Errorf("encode lease of job %s: %w", job, err)
	}
	var newRev uint64
	if present {
		newRev, err = l.kv.Update(ctx, job, b, rev)
	} else {
		newRev, err = l.kv.Create(ctx, job, b)
	}
	if errors.Is(err, jetstream.ErrKeyRevisionMismatch) || errors.Is(err, jetstream.ErrKeyExists) {
		v, _, _, gerr := l.get(ctx, job) // lost the race: report the winner
		return v, false, gerr
	}
	if err != nil {
		return LeaseValue{}, false, fmt.Errorf("write lease of job %s: %w", job, err)
	}
	l.mu.Lock()
	l.held[holder{job, node}] = held{rev: newRev, epoch: next.Epoch, renewed: next.RenewedUnixNano}
	l.mu.Unlock()
	return next, true, nil
}

// Holding reports whether node may still act as the coordinator of job at
// now, by what these Leases last wrote: it acquired or renewed the lease
// and the last of those writes is not older than timeout (HeldBy). It needs
// no NATS round trip, so a coordinator checks it before each action; a
// paused or partitioned holder finds its lease lapsed by the time a
// contender may take it over. It returns the epoch held.
func (l *Leases) Holding(job, node string, now time.Time, timeout time.Duration) (uint64, bool) {
	l.mu.Lock()
	h, ok := l.held[holder{job, node}]
	l.mu.Unlock()
	if !ok {
		return 0, false
	}
	return h.epoch, HeldBy(LeaseValue{Node: node, Epoch: h.epoch, RenewedUnixNano: h.renewed}, node, now, timeout)
}

// Renew extends node's lease of job to now, keeping the epoch. It is one
// compare-and-set on the revision of node's last write through these
// Leases, so it fails with ErrLeaseLost when anybody else wrote the lease
// since, or when node never acquired it here.
func (l *Leases) Renew(ctx context.Context, job, node string, now time.Time) (LeaseValue, error) {
	h := holder{job, node}
	l.mu.Lock()
	mine, ok := l.held[h]
	l.mu.Unlock()
	if !ok {
		return LeaseValue{}, fmt.Errorf("renew lease of job %s by %s: not held: %w", job, node, ErrLeaseLost)
	}
	next := LeaseValue{Node: node, Epoch: mine.epoch, RenewedUnixNano: now.UnixNano()}
	rev, err := l.write(ctx, job, next, mine.rev)
	if err != nil {
		l.forget(h, mine)
		return LeaseValue{}, fmt.Errorf("renew lease of job %s by %s: %w", job, node, err)
	}
	l.mu.Lock()
	if l.held[h] == mine {
		l.held[h] = held{rev: rev, epoch: next.Epoch, renewed: next.RenewedUnixNano}
	}
	l.mu.Unlock()
	return next, nil
}

// Release gives up node's lease of job so another node can take it over at
// once; the epoch is kept so the next holder's is larger. Releasing a lease
// node no longer holds returns ErrLeaseLost.
func (l *Leases) Release(ctx context.Context, job, node string) error {
	h := holder{job, node}
	l.mu.Lock()
	mine, ok := l.held[h]
	delete(l.held, h)
	l.mu.Unlock()
	if !ok {
		return fmt.Errorf("release lease of job %s by %s: not held: %w", job, node, ErrLeaseLost)
	}
	if _, err := l.write(ctx, job, LeaseValue{Epoch: mine.epoch}, mine.rev); err != nil {
		return fmt.Errorf("release lease of job %s by %s: %w", job, node, err)
	}
	return nil
}

// write stores v if the lease is still at revision rev; a revision mismatch
// (anybody else wrote it) is ErrLeaseLost.
func (l *Leases) write(ctx context.Context, job string, v LeaseValue, rev uint64) (uint64, error) {
	b, err := encodeLease(v)
	if err != nil {
		return 0, fmt.Errorf("encode: %w", err)
	}
	newRev, err := l.kv.Update(ctx, job, b, rev)
	if errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
		return 0, fmt.Errorf("written by another node: %w", ErrLeaseLost)
	}
	return newRev, err
}

// forget drops h's record if it is still mine.
func (l *Leases) forget(h holder, mine held) {
	l.mu.Lock()
	if l.held[h] == mine {
		delete(l.held, h)
	}
	l.mu.Unlock()
}

// ErrFenced is wrapped by the error of a command refused because a newer
// coordinator of the job was seen (see Fence).
var ErrFenced = errors.New("fenced: a newer coordinator took the job over")
