package state

// Table is one named state of one task, split by key group.
//
// The typed tables in this package (ValueTable, MapTable, ListTable)
// implement it; a Backend holds a set of them and snapshots them together.
type Table interface {
	// Name is the table's name, unique within a Backend.
	Name() string
	// Kind says which shape of state the table holds.
	Kind() Kind
	// MaxParallelism is the number of key groups the table is split into.
	MaxParallelism() int
	// SnapshotGroup returns the msgpack encoding of every entry of key
	// group g, or nil when the group has none.
	SnapshotGroup(g int) ([]byte, error)
	// RestoreGroup replaces the entries of key group g with those encoded in
	// data (nil or empty data clears the group). On error the group is left
	// as it was.
	RestoreGroup(g int, data []byte) error
	// DropGroup removes every entry of key group g.
	DropGroup(g int)
	// Len returns the number of keys that have state in key group g.
	Len(g int) int
}

// stager is implemented by the tables of this package so that a Backend can
// decode every table of a blob before changing any of them.
type stager interface {
	// stageGroup decodes data for key group g and returns a commit function
	// that installs it; nothing changes until commit is called, so several
	// groups may be staged at once. With adoptInput the staged state may
	// point into data.
	stageGroup(g int, data []byte, in keepInput) (commit func(), err error)
}
