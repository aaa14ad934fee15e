// Package cluster joins weir node processes over NATS: secure connections,
// an embeddable NATS server with JetStream, membership by heartbeats, task
// placement, one coordinator per job by lease, and a registry of submitted
// jobs that any node can read and take over.
//
// # Pure parts and NATS parts
//
// Members (liveness), Place (placement) and Expired (lease decisions) are
// pure: events in, results out, the time is passed in, no goroutines, no
// sleeps. The NATS side (StartHeartbeats, WatchHeartbeats, Leases, Jobs,
// StartEmbedded, ConnOptions.Connect) is a thin shell around them.
//
// # Subjects and buckets
//
// Every node publishes a msgpack Heartbeat on weir.node.<node>.hb
// (HeartbeatSubject); watchers subscribe to weir.node.*.hb. Leases live in a
// JetStream key-value bucket (DefaultLeaseBucket) keyed by job name, job
// records in another (DefaultJobBucket).
//
// # How the coordinator of a job is decided
//
// Each job has at most one coordinator. The lease of job J is the key J in
// the lease bucket; its value is a LeaseValue {Node, Epoch, RenewedUnixNano}.
//
//   - A node that wants to coordinate J calls Leases.Acquire. If the key is
//     absent it is created with Epoch 1 (JetStream KV Create, which fails when
//     the key exists). If it is present and Expired (released, or not renewed
//     for longer than the timeout), the node writes {itself, Epoch+1, now}
//     with KV Update conditioned on the revision it just read. If the lease
//     is live and held by someone else, Acquire reports false.
//   - Every write is a compare-and-set on the key's revision, so of any
//     number of nodes that saw the same revision, exactly one write succeeds;
//     the others get a revision mismatch and lose. Two coordinators can never
//     both hold the same revision, hence never the same epoch.
//   - The holder calls Leases.Renew well inside the timeout (every timeout/3
//     is a good rate). Renew is again a CAS on the revision the holder itself
//     last wrote: if anybody else wrote the key in between, Renew fails with
//     ErrLeaseLost and the holder must stop acting as coordinator at once.
//   - A holder also stops acting when its last successful renew is older than
//     the timeout (HeldBy reports false), even if it could not reach NATS to
//     find out: a contender only takes over after the timeout, so the old
//     holder has stopped by then. This relies on node clocks agreeing to well
//     within the timeout.
//   - The Epoch only grows (Release keeps it, takeovers add one), so it is a
//     fencing token: a coordinator stamps its commands with its epoch and
//     receivers reject commands from a lower epoch than the highest seen.
package cluster
