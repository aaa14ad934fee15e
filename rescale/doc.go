// Package rescale changes the parallelism of a running job's operators
// without stopping it: the planner (NewPlan) and the protocol, as pure state
// machines (Coordinator for the job, Task for each task) with logical time,
// no goroutines and no I/O. The job and task actors carry out their actions.
//
// # Plan
//
// NewPlan takes the job's Topology (operators, parallelisms, key-group
// tables, edges) and the requested parallelisms, and computes each changed
// operator's new table with keygroups.Table.Rescale: every instance within
// one group of the others, and no more groups moved than any balanced table
// must move (4 → 5 instances of 128 groups moves 25; Flink's ranges move
// 62). Operators joined by explicit forward edges change together; implicit
// edges choose their partitioner again; new instances are placed by
// cluster/placement, preferring nodes that hold their incoming groups'
// state. A Plan carries its Input, encodes with msgpack and replays. A sink
// that stages its output per checkpoint (Operator.StagesOutput) may gain
// instances; it may lose some only if its instances hand their staged
// output off (Operator.HandsOff): otherwise each instance's uncommitted
// output is a transaction only it can commit.
//
// Only the tasks of the failover regions that hold a changed operator, and
// the added instances, take part (Participants): every producer and
// consumer of a changed operator is among them, and the others get no
// barrier.
//
// # Protocol
//
//  1. The Coordinator waits for a running checkpoint to finish, and no
//     checkpoint starts until the rescale commits or fails.
//  2. It spawns and wires the added instances (Spawn, Prepared).
//  3. It injects the rescale barrier at the sources. A task forwards it on
//     every output channel it had before (Switch), and every record it emits
//     after that point is routed by the new tables. A task whose operator does
//     not change switches at its first barrier; a task of a changed keyed
//     operator once it has the barrier on every old input (what it has not
//     processed of a leaving group is set aside, step 4); a task of a changed
//     stateless operator once drained: barriers in on every old input and
//     every buffer sent before them processed.
//  4. An old owner of moving groups, once it has the barrier on every old
//     input, hands each group's state to its new owner (Handoff), with the
//     records of those groups that barriers overtook (SetAside, unaligned);
//     when their originals arrive it drops those records (Decision.Drop).
//  5. Every task reports each old input drained: every buffer its producer
//     sent before the barrier processed (InputDrained). When every consumer
//     of an old instance O of a changed operator has drained O's channel,
//     the Coordinator fences O (Fence).
//  6. A new owner holds the records of a group moving to it that arrive
//     before the group's state (Decision.Hold, in arrival order; once the
//     held records reach HoldBytes, an input that brings more pauses) and
//     installs the state when it comes (Restore). It processes the records
//     that came with the state and then the held ones (Release) once it has
//     switched itself and the old owner is fenced.
//     Groups that do not move are never held.
//  7. A removed instance of a sink that hands its staged output off sends,
//     once drained (it has written its last record), everything it staged
//     and has not committed to instance StagedOwner (HandStaged), which
//     takes it over (Staged, TakeStaged) and commits it with its own; that
//     instance is done only once every such handoff has arrived. A failure
//     before the commit recovers the old parallelism, where each instance
//     recovers its own transactions; after it, a restore at the new
//     parallelism has each remaining instance recover the removed ones'
//     checkpoint state (the same StagedOwner). The sink commits a
//     transaction by its own identity, so one committed both ways counts
//     once.
//  8. Removed instances stop after their handoff, once drained (Stop). When
//     every instance of the changed operators is done (TaskDone) the
//     Coordinator commits: the new tables and parallelisms are the job's,
//     and the next checkpoint's manifest has them.
//
// Any failure before the commit (a task, a channel, a node, a protocol error
// from a Task, a timeout) aborts the rescale and recovers the job from its
// latest completed checkpoint, which was taken before the rescale began:
// old tables and old parallelisms, whole. After the commit the job's plan
// has the new parallelisms, and its recovery restores the latest checkpoint
// at them (restore rescales with the same rule). Either way every key group
// has one owner from one table: never a mix.
//
// # Why it holds
//
// No channel blocks. A producer P switches at one point of its output: on
// channel P → O every record before the barrier was routed by the old table,
// every record after it by the new one, so after P's barrier O gets no record
// of a group that leaves it. Once O has the barrier on all its old inputs it
// has received every record of its leaving groups it will ever get: those it
// processed are in the state it hands off; those the barriers overtook (the
// buffers with seq in (processed, lastSeq] of each input) it set aside from
// their copies, and it drops their originals. Records added by the rescale
// wiring, or after a barrier, go to the new owner N, which holds them until
// the handoff. So each record is applied exactly once, at O or at N.
//
// Per key order: one producer's records of a key reach O in channel order
// before its switch and N in channel order after it; O applies (or sets
// aside, in channel order) all of the former before the handoff, and N
// applies the handoff's state, then the set-aside records, then its held
// records in arrival order. Records of one key from different producers were
// never ordered (they travel on different channels). Downstream, a key's
// outputs came from one instance, over one channel per consumer; across the
// rescale they come from O, then from N, over two. O emits every output of a
// leaving group before it switches (it switches when it hands off, and
// processes none of the group after), and N emits none before O is fenced,
// that is before every consumer has processed all O sent before its switch:
// so every consumer sees a key's outputs in order (the keycount verifier
// checks exactly that). N also releases only after its own switch, so on a
// forward edge into an operator rescaled with it, the outputs of a moved
// group follow N's barrier, as the next operator's protocol requires.
//
// No deadlock: an input pauses for held records only after its producer has
// switched, so that producer has already sent its barrier and every
// old-routed record ahead of it to every old owner; an old owner never waits
// for anything but its own inputs, which carry only those records; a
// consumer drains an old channel without waiting for any rescale event, so
// every fence comes. Holding is bounded by a budget of HoldBytes over the
// task's inputs (the shell's default is 64 MiB): below it no input pauses,
// so a slow handoff holds only its own groups; once it is reached, each
// input that brings more held records pauses until a release brings the
// held records below it.
//
// Tests: testdata/*.txt scripts (every step, every failure point, every
// refused event) and a seeded simulation (TestSimulation) that runs the
// real machines over an in-memory dataflow with overtaking barriers, credit
// and random scheduling, and checks exactly-once and per-key order.
package rescale
