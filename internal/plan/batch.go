package plan

// Batch is a batch of records of one type. The runtime moves, counts, encodes
// and stores batches without looking inside; only the operators at either end
// know the record type.
type Batch interface {
	// Len is the number of records.
	Len() int
	// At returns record i boxed, for error messages and inspection (slow).
	At(i int) any
}

// Records is the Batch of a []T.
type Records[T any] []T

// Len is the number of records.
func (r Records[T]) Len() int { return len(r) }

// At returns record i.
func (r Records[T]) At(i int) any { return r[i] }

// Output is where an operator instance writes its records: one EdgeWriter per
// output edge, in the order of the operator's Outputs.
type Output interface {
	Writers() []EdgeWriter
}

// EdgeWriter fills one output edge's batches, one per consumer channel. It is
// made by Edge.NewWriter, knows the record type, and hands each full batch to
// WriterConfig.Seal.
type EdgeWriter interface {
	// Take removes and returns channel c's partially filled batch; nil when it
	// is empty.
	Take(c int) Batch
}

// BatchCodec turns batches of one record type into bytes and back.
type BatchCodec interface {
	EncodeBatch(b Batch) ([]byte, error)
	DecodeBatch(data []byte) (Batch, error)
}
