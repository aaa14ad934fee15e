// Package state is the keyed state backend of one task instance.
//
// State lives in memory, split by key group (DESIGN.md invariant 4): every
// table keeps one lazily allocated Go map per key group, indexed by a slice,
// so a hot-path access is a slice index plus one map lookup with no
// allocation, no lookup by state name and no interface boxing of values.
//
// Keys are canonical key bytes passed as a Go string; their key group, an int
// in [0, maxParallelism), is computed by the caller (package keygroups). The
// backend never hashes keys itself.
//
// Each table can serialize and restore one key group at a time with msgpack,
// so snapshots can be stored, moved and loaded per key group. A Backend
// bundles the group of every registered table into one blob:
//
//	byte 0      format version (currently 1)
//	msgpack     array [group, maxParallelism, map table name -> [kind, bytes]]
//	last 4      CRC-32C (Castagnoli, big endian) of everything before it
//
// Table names in the map are sorted and table entries are sorted by key, so
// the same state always gives the same bytes (values that themselves contain
// Go maps other than map[string]string, map[string]bool and
// map[string]interface{} are encoded in map order by msgpack; give such
// values a msgpack.CustomEncoder if byte-identical snapshots matter).
//
// A blob records the key group and maxParallelism it was taken for; restoring
// it into another group or a backend with another maxParallelism is rejected
// with ErrMismatch, because the keys inside it hash to the original group and
// would be unreachable anywhere else.
//
// Tables and backends are not safe for concurrent use: they belong to the one
// task actor that owns them.
package state
