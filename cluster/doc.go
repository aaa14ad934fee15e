// Package cluster joins weir node processes over NATS: secure connections,
// an embeddable NATS server with JetStream, membership by heartbeats (and,
// in the node agent, probes of the nodes' connections), one
// coordinator per job by lease, and a registry of submitted jobs that any
// node can read and take over. Its subpackages hold task placement
// (cluster/placement), the node agent's pure coordination core
// (cluster/coord) and the node agent itself (cluster/node).
//
// # Pure parts and NATS parts
//
// Members (liveness), Expired and HeldBy (lease decisions) and Fence
// (refusing replaced coordinators) are pure: events in, results out, the time is
// passed in, no goroutines, no sleeps. The NATS side (StartHeartbeats, WatchHeartbeats, Leases, Jobs,
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
//     with KV Update conditioned on the revision it just read. A live lease
//     held by the same node id is taken the same way, Epoch+1: whether a new
//     incarnation of the node (restarted with the same id) or the same
//     process starting a new coordinator of J before the last one's lease was
//     released, each coordinator has an epoch of its own. If the lease is
//     live and held by someone else, Acquire reports false.
//   - Every write is a compare-and-set on the key's revision, so of any
//     number of nodes that saw the same revision, exactly one write succeeds;
//     the others get a revision mismatch and lose. Two coordinators can never
//     both hold the same revision, hence never the same epoch.
//   - The holder calls Leases.Renew well inside the timeout (every timeout/3
//     is a good rate). Renew is again a CAS on the revision the holder itself
//     last wrote: if anybody else wrote the key in between, Renew fails with
//     ErrLeaseLost and the holder must stop acting as coordinator at once.
//   - A holder also stops acting when its last successful renew is older than
//     the timeout (Leases.Holding and the agent's coord.Core.Holds, by
//     HeldBy, report false), even if it could not reach NATS to find out: a
//     contender only takes over after the timeout, so the old holder has
//     stopped by then. The runtime asks the agent before the coordinator
//     acts on any message. This relies on
//     node clocks agreeing to well within the timeout.
//   - The Epoch only grows (Release keeps it, takeovers add one), so it is a
//     fencing token: a coordinator stamps its commands with its epoch (the
//     prepare request, and every message of the job's runtime, whose parts
//     carry the epoch of the coordinator that started them), and each node
//     keeps a Fence that refuses a job's messages from a lower epoch than the
//     highest it has seen. A paused holder that resumes after a takeover is
//     thus refused by the nodes the new coordinator prepared, even for an
//     action it had begun before Holding turned false.
//
// # Placement of a whole job
//
// A submission or takeover places every task of a job over the live nodes'
// placement.JobSlots: a node's slots less those other jobs use (heartbeats
// count tasks per job), since the job's own running tasks are replaced. A
// node that has just started waits one heartbeat timeout before placing, so
// it knows every live node. When the job does not fit
// (placement.ErrNotEnoughSlots), coord.Core decides the retries with backoff
// (placement.Wait) and when to give up and fail the job with the reason.
package cluster
