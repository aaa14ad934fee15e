package plan

// RecordGroups knows the record type of a hash edge, which a Batch hides: it
// finds each record's key group and cuts batches, so that the edge's channel
// state can be split by key group on a restore at a new parallelism. It has
// the methods of inflight.Records (which plan cannot import), so a value of
// one is a value of the other.
type RecordGroups interface {
	// Group returns the key group of record i of b.
	Group(b Batch, i int) (int, error)
	// Pick returns a batch of b's records at the ascending indices idx, in
	// that order.
	Pick(b Batch, idx []int) (Batch, error)
}
