// Package keygroups maps keys to key groups and key groups to parallel
// operator instances.
//
// Key groups are weir's unit of keyed state (DESIGN.md invariant 4). A key
// belongs to key group
//
//	GroupOf(HashKey(k), maxParallelism) = HashKey(k) % maxParallelism
//
// where HashKey is MurmurHash3 x86 32-bit with seed 0 over the key's
// canonical bytes:
//
//   - a string is its UTF-8 bytes, as stored;
//   - a signed integer (int, int8 ... int64) is the 8 bytes little-endian of int64(v);
//   - an unsigned integer (uint, uint8 ... uint64) is the 8 bytes little-endian of uint64(v);
//   - a []byte is taken as is (HashBytes).
//
// Types whose underlying type is one of these (type UserID string) hash like
// that underlying type. The hash never depends on Go's map hash, the process,
// the platform or the run, so a key stays in the same key group for the whole
// life of a job, across restarts, nodes and versions. Changing it breaks every
// stored snapshot; the tests pin fixed vectors for that reason.
//
// Which instance owns which key group is an explicit Table. A job starts with
// Flink's contiguous ranges (Contiguous, RangeFor, OwnerOf); a rescale computes
// the next table with Table.Rescale (Rebalance: as few key groups moved as
// balance allows), and a restore reads the stored one with FromOwners. Tables
// carry msgpack tags so they can be stored in checkpoint manifests.
//
// Everything here is pure: no goroutines, no I/O, no logging.
package keygroups
