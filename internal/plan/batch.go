package plan

// Batch is a batch of records of one type. The runtime moves, counts, encodes
// and stores batches without looking inside; only the operators at either end
// know the record type.
type Batch interface {
	// Len is the number of records.
	Len() int
	// At returns record i boxed, for error messages and inspection (slow).
	At(i int) any
	// Slice returns records [from, to) as a batch of the same kind sharing
	// the storage: no copy, one small allocation for the interface value.
	Slice(from, to int) Batch
}

// Records is the Batch of a []T.
type Records[T any] []T

// Len is the number of records.
func (r Records[T]) Len() int { return len(r) }

// At returns record i.
func (r Records[T]) At(i int) any { return r[i] }

// Slice returns records [from, to), sharing the storage.
func (r Records[T]) Slice(from, to int) Batch { return r[from:to:to] }

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
	// AppendBatch appends the encoding of b to dst (a sender reuses dst).
	AppendBatch(dst []byte, b Batch) ([]byte, error)
	// DecodeBatch decodes a batch; it does not keep data.
	DecodeBatch(data []byte) (Batch, error)
}

// Grouped is the batch of a KeyGroupHash edge: the records and, for each,
// the key group its producer computed to route it, so the keyed consumer
// need not hash the key again. Batches decoded from bytes (the wire, channel
// state) carry no groups and are Records.
type Grouped[T any] struct {
	Recs   []T
	Groups []uint16
}

// Len is the number of records.
func (g Grouped[T]) Len() int { return len(g.Recs) }

// At returns record i.
func (g Grouped[T]) At(i int) any { return g.Recs[i] }

// Slice returns records [from, to) with their key groups, sharing the storage.
func (g Grouped[T]) Slice(from, to int) Batch {
	s := Grouped[T]{Recs: g.Recs[from:to:to]}
	if len(g.Groups) == len(g.Recs) {
		s.Groups = g.Groups[from:to:to]
	}
	return s
}

// RecordsOf returns the records of a batch of T, with or without groups;
// ok is false for a batch of another type.
func RecordsOf[T any](b Batch) (recs []T, ok bool) {
	switch b := b.(type) {
	case Records[T]:
		return b, true
	case Grouped[T]:
		return b.Recs, true
	}
	return nil, false
}
