package plan

// LazyRestoring is a Stateful instance whose restore from adopted key-group
// bytes (Snapshot.KeyGroupsAdopted) may leave key groups encoded: it decodes
// each when it first needs it, and the rest on a goroutine of its own that
// the task starts once its restore is done (LazyRestore's).
type LazyRestoring interface {
	LazyRestore() LazyRestorer
}

// LazyRestorer decodes the key groups a restore left encoded
// (state.Backend implements it).
type LazyRestorer interface {
	// Encoded returns the number of key groups still encoded.
	Encoded() int
	// DecodeInBackground starts decoding the key groups still encoded;
	// staged is called, on that goroutine, once all are decoded (or one
	// failed), and the task then calls InstallDecoded. It returns false,
	// starting nothing, when no group is encoded.
	DecodeInBackground(staged func()) bool
	// InstallDecoded installs what the goroutine decoded and decodes any
	// group still encoded; its error names the key group and table that
	// failed to decode.
	InstallDecoded() error
	// StopDecoding stops the goroutine and waits for it to end; the
	// instance's Close calls it too.
	StopDecoding()
}
