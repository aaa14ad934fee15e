package keycount

import (
	"encoding/json"
	"fmt"
	"sync"

	"github.com/weirstream/weir"
)

// CommitLog is what keycount's staging sinks (CommitLog.Sink) make
// visible: the records of every transaction committed, per writer (one run
// of one sink instance: a restart or a new instance is a new writer) in
// commit order, each transaction once however often it is committed.
type CommitLog struct {
	mu        sync.Mutex
	writers   []int           // writer → the instance that opened it
	committed map[txnID]int   // transaction → the instance that committed it
	records   map[int][]Count // writer → its committed records
	total     int
	hook      func() // called once, at the first commit (OnFirstCommit)
}

// txnID names a transaction: what one writer staged for one checkpoint,
// sealed by Sealer (the writer itself, or the one that took its records
// since the checkpoint before over).
type txnID struct {
	Writer int
	ID     uint64
	Sealer int
}

// NewCommitLog returns an empty log.
func NewCommitLog() *CommitLog {
	return &CommitLog{committed: map[txnID]int{}, records: map[int][]Count{}}
}

// txnLog is where staging sinks make their transactions visible.
type txnLog interface {
	// newWriter returns a new writer id for instance, unique in the log.
	newWriter(instance int) int
	// commit makes the transactions up to id among batches visible, each
	// once however often it is committed; by is the instance that
	// commits them.
	commit(by int, id uint64, batches []sealedBatch) error
}

// Sink makes staging sinks that commit to l: two-phase sinks that run at
// any parallelism and hand their staged output off (weir.HandOffSink), so
// live rescales and restores may grow and shrink them.
func (l *CommitLog) Sink() func(int) weir.Sink[Count] {
	return func(int) weir.Sink[Count] { return &stagingSink{log: l} }
}

// OnFirstCommit calls f (once) when l first commits a transaction.
func (l *CommitLog) OnFirstCommit(f func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.hook = f
}

// newWriter returns a new writer id for instance.
func (l *CommitLog) newWriter(instance int) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.writers = append(l.writers, instance)
	return len(l.writers) - 1
}

// commit makes the transactions up to id among batches visible, each once;
// by is the instance that commits them.
func (l *CommitLog) commit(by int, id uint64, batches []sealedBatch) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, b := range batches {
		tx := txnID{b.Writer, b.ID, b.Sealer}
		if _, done := l.committed[tx]; b.ID > id || done {
			continue
		}
		l.records[b.Writer] = append(l.records[b.Writer], b.Records...)
		l.total += len(b.Records)
		l.committed[tx] = by
		if l.hook != nil {
			l.hook()
			l.hook = nil
		}
	}
	return nil
}

// Verify reports whether the committed output is every key's counts
// 1..records/keys, each once, in any order.
func (l *CommitLog) Verify(records int64, keys int) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	seen := map[Count]int{}
	for _, recs := range l.records {
		for _, c := range recs {
			seen[c]++
		}
	}
	for _, key := range Keys(keys) {
		for c := int64(1); c <= records/int64(keys); c++ {
			if got := seen[Count{Key: key, Count: c}]; got != 1 {
				return fmt.Errorf("staging sink: %s count %d committed %d times, want once", key, c, got)
			}
		}
	}
	if int64(l.total) != records {
		return fmt.Errorf("staging sink: %d records committed, want %d", l.total, records)
	}
	return nil
}

// VerifyWriterOrder reports whether within each writer a key's counts
// increase. A restore at another sink parallelism breaks it without
// breaking exactly once: it replays the channel state of the old
// instances' inputs to the new ones, and records of one key sent to
// different instances (a rebalance edge) were never ordered.
func (l *CommitLog) VerifyWriterOrder() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for w, recs := range l.records {
		last := map[string]int64{}
		for _, c := range recs {
			if c.Count <= last[c.Key] {
				return fmt.Errorf("staging sink: writer %d (instance %d) committed %s count %d after %d", w, l.writers[w], c.Key, c.Count, last[c.Key])
			}
			last[c.Key] = c.Count
		}
	}
	return nil
}

// Instances counts the sink instances whose writers committed records.
func (l *CommitLog) Instances() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	seen := map[int]bool{}
	for w, recs := range l.records {
		if len(recs) > 0 {
			seen[l.writers[w]] = true
		}
	}
	return len(seen)
}

// TakenOver counts the transactions committed by an instance other than
// the one that wrote them (handed off by a removed instance, or recovered
// from a removed instance's checkpoint state).
func (l *CommitLog) TakenOver() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for tx, by := range l.committed {
		if l.writers[tx.Writer] != by {
			n++
		}
	}
	return n
}

// sealedBatch is one transaction: what a writer (of sink instance
// Instance) wrote before checkpoint ID, sealed by writer Sealer. A removed
// instance may seal its records as of checkpoint ID and hand the rest
// off, and the instance that takes them over seal them at its own
// checkpoint ID: two transactions of one writer and checkpoint, told
// apart by the sealer.
type sealedBatch struct {
	Writer   int     `json:"w"`
	Instance int     `json:"in"`
	ID       uint64  `json:"id"`
	Sealer   int     `json:"s"`
	Records  []Count `json:"r"`
}

// openBatch is what a writer (of sink instance Instance) wrote since its
// last checkpoint, handed off.
type openBatch struct {
	Writer   int     `json:"w"`
	Instance int     `json:"in"`
	Records  []Count `json:"r"`
}

// handedOff is a removed stagingSink's HandOff state.
type handedOff struct {
	Pending []sealedBatch `json:"pending"`
	Open    []openBatch   `json:"open"`
}

// stagingSink stages its records, seals them per checkpoint as a
// transaction of its writer (its checkpoint state is every transaction it
// holds and has not committed) and commits them to its CommitLog when the
// checkpoint completes. An instance a rescale removes hands its
// transactions, and its records since the last checkpoint, to a remaining
// one, which commits them as theirs.
type stagingSink struct {
	log      txnLog
	hold     func(point string, instance int) // stops the instance at a point (StagingDir.Hold); nil: never
	instance int
	writer   int
	current  []Count
	adopted  []openBatch // other writers' records since the last checkpoint, taken over
	pending  []sealedBatch
}

func (s *stagingSink) Open(info weir.TaskInfo) error {
	s.instance = info.Instance
	s.writer = s.log.newWriter(info.Instance)
	return nil
}
func (s *stagingSink) Finish() error { return nil }
func (s *stagingSink) Close() error  { return nil }

func (s *stagingSink) Write(b []Count) error {
	s.current = append(s.current, b...)
	return nil
}

// PrepareCommit seals its records and those it took over as transactions
// of checkpoint id.
func (s *stagingSink) PrepareCommit(id uint64) ([]byte, error) {
	s.pending = append(s.pending, sealedBatch{Writer: s.writer, Instance: s.instance, ID: id, Sealer: s.writer, Records: s.current})
	for _, o := range s.adopted {
		s.pending = append(s.pending, sealedBatch{Writer: o.Writer, Instance: o.Instance, ID: id, Sealer: s.writer, Records: o.Records})
	}
	s.current, s.adopted = nil, nil
	return json.Marshal(s.pending)
}

// Commit commits the transactions up to id.
func (s *stagingSink) Commit(id uint64) error {
	if s.hold != nil && s.commitsTakenOver(id) {
		s.hold(HoldTakenOverCommit, s.instance)
	}
	if err := s.log.commit(s.instance, id, s.pending); err != nil {
		return fmt.Errorf("staging sink %d: commit %d: %w", s.instance, id, err)
	}
	kept := s.pending[:0]
	for _, b := range s.pending {
		if b.ID > id {
			kept = append(kept, b)
		}
	}
	s.pending = kept
	return nil
}

// commitsTakenOver reports whether a commit of id commits a transaction
// another instance wrote (handed off to this one).
func (s *stagingSink) commitsTakenOver(id uint64) bool {
	for _, b := range s.pending {
		if b.ID <= id && b.Instance != s.instance && len(b.Records) > 0 {
			return true
		}
	}
	return false
}

// Recover commits the transactions up to id. An instance that did not run
// at checkpoint id (added since) gets no state: it has nothing to finish.
func (s *stagingSink) Recover(id uint64, state []byte) error {
	s.current, s.adopted, s.pending = nil, nil, nil
	return s.RecoverRemoved(id, state)
}

// RecoverRemoved commits the transactions up to id of a removed instance's
// checkpoint state.
func (s *stagingSink) RecoverRemoved(id uint64, state []byte) error {
	if len(state) == 0 {
		return nil
	}
	var batches []sealedBatch
	if err := json.Unmarshal(state, &batches); err != nil {
		return fmt.Errorf("staging sink %d: checkpoint %d: %w", s.instance, id, err)
	}
	if err := s.log.commit(s.instance, id, batches); err != nil {
		return fmt.Errorf("staging sink %d: recover checkpoint %d: %w", s.instance, id, err)
	}
	return nil
}

// HandOff returns every transaction not committed and the records since
// the last checkpoint, its own and those it took over, and keeps none.
func (s *stagingSink) HandOff() ([]byte, error) {
	if s.hold != nil {
		s.hold(HoldHandOff, s.instance)
	}
	h := handedOff{Pending: s.pending, Open: append(s.adopted, openBatch{Writer: s.writer, Instance: s.instance, Records: s.current})}
	s.current, s.adopted, s.pending = nil, nil, nil
	return json.Marshal(h)
}

// TakeOver adopts a removed instance's transactions and open records.
func (s *stagingSink) TakeOver(state []byte) error {
	var h handedOff
	if err := json.Unmarshal(state, &h); err != nil {
		return fmt.Errorf("staging sink %d: take over: %w", s.instance, err)
	}
	s.pending = append(s.pending, h.Pending...)
	s.adopted = append(s.adopted, h.Open...)
	return nil
}
