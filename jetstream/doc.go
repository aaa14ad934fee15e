// Package jetstream reads and writes NATS JetStream streams from a weir job:
// FromStream is a source, ToStream a sink, both on the NATS that a weir
// cluster already runs.
//
// # Source
//
// A source reads one stream, cut into splits by subject filter
// (SourceConfig.Subjects; none: the whole stream is one split). At the first
// run split i goes to instance i mod parallelism; each split is read by an
// ordered consumer. A split's offset, stored in every checkpoint, is the
// stream sequence of the last message it read, so a restore starts each
// split's consumer at the next sequence, and a restore at another
// parallelism deals the checkpoint's splits to the new instances (see
// weir.FromSplitSource). In bounded mode each instance reads up to the
// stream's last sequence when it opened and then ends, so a job over a
// filled stream terminates; otherwise it waits for new messages.
//
// # Sink
//
// Without checkpoints a sink publishes every record as it arrives (at least
// once across failures). With checkpoints it is exactly once, two-phase:
//
//   - Write stages the records (in memory).
//   - PrepareCommit(k) seals them as batch k with a random nonce and stores,
//     in checkpoint k's state, every sealed batch not yet published and the
//     stream's last sequence at that moment (ScanFrom).
//   - Commit(k), once checkpoint k is complete, publishes the batches up to k,
//     each message with headers Weir-Sink (job/operator/instance),
//     Weir-Batch (checkpoint-nonce), Weir-Index and a message id
//     (Nats-Msg-Id) made of the three, and waits for every ack.
//   - Recover(k), on a restore from checkpoint k, reads the stream's headers
//     after ScanFrom: a message of this sink instance whose batch is in k's
//     state marks that index as stored; any other message of this instance
//     belongs to a batch sealed after k (a newer checkpoint committed before
//     an older one was restored) and is deleted. It then publishes the
//     indexes of k's batches that are not stored.
//
// Why that is exactly once: a record reaches the stream only through a batch,
// and a batch is published only for a completed checkpoint, whose state holds
// it (invariant 5). A batch published before PrepareCommit(k) was acked
// before ScanFrom was read, so all its messages have sequences up to
// ScanFrom and are not in k's state; every message of a batch in k's state,
// or sealed after k, has a higher sequence, because the instance publishes
// only after sealing and one instance does one thing at a time. So the scan
// sees every message that Recover must count or delete, and after Recover the
// stream holds each message of each batch up to k exactly once and nothing
// after k: the output of the consistent cut k. Replay after k seals new
// batches with new nonces, so their ids never meet a deleted message's id.
// Recover does not rely on JetStream's duplicate window (default two
// minutes); the message ids only de-duplicate a publish retried within
// Commit. Restoring a checkpoint older than the newest committed one
// retracts (deletes) the newer output, as the file sink truncates.
//
// Rescaling: the sink is a weir.HandOffSink, so it may also have fewer
// instances, live or at a restore. An instance a live rescale removes hands
// its sealed batches and the records it staged since its last checkpoint to
// another; the taker seals the records into its next batch and adopts the
// batches as its own (Weir-Sink is the taker's): the removed instance never
// published them, and if a checkpoint from before the rescale is restored,
// the removed instance's Recover publishes them under its own identity while
// the taker's deletes its copies, published after that checkpoint. A
// restore at fewer instances has an instance recover each removed one's
// state under the removed one's identity (RecoverRemoved), by the same
// rules as Recover.
//
// What it needs: the stream must keep the sink's messages since the restored
// checkpoint (limits that discard them undo the scan) and allow deletes; a
// sink's staged output is held in memory and in the checkpoint until it
// commits, so checkpoint often when output is large.
//
// # Encoding
//
// Payloads are plain, so `nats stream view` shows them: a []byte record is
// the payload as it is, any other record is JSON (encoding/json), unless
// SourceConfig.Decode or SinkConfig.Encode say otherwise.
//
// # Connection
//
// Conn.NC is an existing connection; otherwise each instance connects to
// Conn.URL, or $NATS_URL when empty, or nats://127.0.0.1:4222 (ResolveURL).
package jetstream
