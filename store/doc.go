// Package store keeps durable checkpoints: the blobs a checkpoint is made of
// (key-group state, operator state, captured channel state) and one manifest
// per checkpoint that is written last (DESIGN.md invariant 5). A checkpoint
// exists exactly when its manifest is committed and verifies; blobs without a
// valid manifest are invisible to List and Latest.
//
// Two implementations share the Store interface and one conformance test:
//
//   - Local keeps checkpoints in a directory (the default of `node run`,
//     under --state-dir): <dir>/<job>/chk-<id 20 digits>/<blob name> and
//     <dir>/<job>/chk-<id>/_manifest. Every file is written to a temporary file
//     in the same directory, fsynced, renamed and the directory fsynced, so a
//     crash or a failing disk never leaves a partial blob or manifest under
//     its final name. All file I/O goes through the FS interface so tests can
//     inject faults.
//   - JetStream keeps checkpoints in a NATS JetStream object store, one bucket
//     per job (weir-<job>), objects chk-<id>/<blob name> and chk-<id>/_manifest.
//
// Every blob is verified on read against the size and CRC32C recorded in its
// BlobRef; every manifest carries a header (magic, version, length, CRC32C) so
// a torn or garbage manifest is detected. Corruption is reported as an error
// wrapping ErrCorrupt that names the job, checkpoint and blob; VerifyCheckpoint
// checks every blob of a manifest at once and also names the task and key
// group. DeleteUncommitted removes checkpoints without a valid manifest below
// a bound that keeps the one being written out of reach.
//
// A cluster node's store is a Mirror: the shared JetStream store plus a Local
// copy of what the node's tasks wrote, with per checkpoint a local index
// (<job>/chk-<id>/_local_index) that places each section by SectionKey —
// (operator, key group), (operator, instance) or (operator, instance, input)
// — never by the instance or blob that wrote it. ReadSections reads each
// section from the local copy when the index places it and it verifies,
// else from the primary, and returns ReadStats; Reconcile deletes local
// state the primary no longer holds; Inventory summarises the copy as
// key-group ranges and bytes.
package store
