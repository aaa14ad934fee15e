package plan

// Split is one part of a source's input: split ID of the Of splits the
// source was cut into, read up to Offset (how many of its records were
// read). A source at its first run has one split per instance: split i of p
// for instance i.
type Split struct {
	ID, Of int
	Offset int64
}

// SplitSource is a Source whose position is a list of splits, so that it can
// resume at another parallelism: a restore hands each instance the splits it
// now serves, whichever instance read them before. An instance given no
// split reads nothing and is done at once.
type SplitSource interface {
	Source
	// Splits is the instance's splits and their offsets now.
	Splits() []Split
	// AssignSplits replaces the instance's splits (after Open, before the
	// first Read).
	AssignSplits(splits []Split) error
}
