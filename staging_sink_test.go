package weir_test

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/samples/keycount"
)

// commitLog is what a stagingSink makes visible: the records of every
// transaction committed, per writer (one sink instance's run: a restart or
// a new instance is a new writer) in commit order, each transaction once
// however often it is committed (Commit and Recover are idempotent).
type commitLog struct {
	mu        sync.Mutex
	writers   []int         // writer → the instance that opened it
	committed map[txnID]int // transaction → the instance that committed it
	records   map[int][]keycount.Count
	hook      func() // called once, at the first commit (onFirstCommit)
}

// txnID names a transaction: what one writer staged for one checkpoint.
type txnID struct {
	Writer int
	ID     uint64
}

func newCommitLog() *commitLog {
	return &commitLog{committed: map[txnID]int{}, records: map[int][]keycount.Count{}}
}

// newWriter returns a new writer id for instance.
func (l *commitLog) newWriter(instance int) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.writers = append(l.writers, instance)
	return len(l.writers) - 1
}

// commit makes the sealed batches up to id visible, each transaction once;
// by is the instance that commits them.
func (l *commitLog) commit(by int, id uint64, batches []sealedBatch) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, b := range batches {
		tx := txnID{b.Writer, b.ID}
		if _, done := l.committed[tx]; b.ID > id || done {
			continue
		}
		l.records[b.Writer] = append(l.records[b.Writer], b.Records...)
		l.committed[tx] = by
		if l.hook != nil {
			l.hook()
			l.hook = nil
		}
	}
}

// instances counts the sink instances whose writers committed output.
func (l *commitLog) instances() int {
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

// takenOver counts the non-empty transactions committed by an instance
// other than the one that wrote them (handed off by a removed instance).
func (l *commitLog) takenOver() int {
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

// verify checks that the committed output is every key's counts 1..n/k,
// each once, and that within each writer a key's counts increase.
func (l *commitLog) verify(t *testing.T, n int64, k int) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	for w, recs := range l.records {
		last := map[string]int64{}
		for _, c := range recs {
			if c.Count <= last[c.Key] {
				t.Fatalf("writer %d (instance %d) committed %s count %d after %d", w, l.writers[w], c.Key, c.Count, last[c.Key])
			}
			last[c.Key] = c.Count
		}
	}
	l.verifyOnce(t, n, k)
}

// verifyOnce checks that the committed output is every key's counts
// 1..n/k, each once, in any order. The caller holds l.mu.
func (l *commitLog) verifyOnce(t *testing.T, n int64, k int) {
	t.Helper()
	seen := map[keycount.Count]int{}
	total := 0
	for _, recs := range l.records {
		for _, c := range recs {
			seen[c]++
			total++
		}
	}
	for _, key := range keycount.Keys(k) {
		for c := int64(1); c <= n/int64(k); c++ {
			if got := seen[keycount.Count{Key: key, Count: c}]; got != 1 {
				t.Fatalf("%s count %d committed %d times, want once", key, c, got)
			}
		}
	}
	if total != int(n) {
		t.Fatalf("%d records committed, want %d", total, n)
	}
}

// verifyUnordered is verify without the order check: a restore at fewer
// sink instances replays the channel state of the removed instances'
// inputs to the remaining ones, and records of one key on a rebalance edge
// to different instances were never ordered.
func (l *commitLog) verifyUnordered(t *testing.T, n int64, k int) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.verifyOnce(t, n, k)
}

// sealedBatch is what a writer wrote before checkpoint ID: one transaction.
type sealedBatch struct {
	Writer  int
	ID      uint64
	Records []keycount.Count
}

// openBatch is what a writer wrote since its last checkpoint, handed off.
type openBatch struct {
	Writer  int
	Records []keycount.Count
}

// handedOff is a removed stagingSink's HandOff state.
type handedOff struct {
	Pending []sealedBatch
	Open    []openBatch
}

// stagingSink is a two-phase sink that runs at any parallelism and hands
// its staged output off (weir.HandOffSink): each instance stages its
// records, seals them per checkpoint as a transaction of its writer (its
// checkpoint state is every transaction it holds and has not committed)
// and appends them to a commitLog when the checkpoint completes. An
// instance a rescale removes hands its transactions, and its records since
// the last checkpoint, to a remaining one, which commits them as theirs.
type stagingSink struct {
	log      *commitLog
	instance int
	writer   int
	current  []keycount.Count
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

func (s *stagingSink) Write(b []keycount.Count) error {
	s.current = append(s.current, b...)
	return nil
}

func (s *stagingSink) PrepareCommit(id uint64) ([]byte, error) {
	s.pending = append(s.pending, sealedBatch{Writer: s.writer, ID: id, Records: s.current})
	for _, o := range s.adopted {
		s.pending = append(s.pending, sealedBatch{Writer: o.Writer, ID: id, Records: o.Records})
	}
	s.current, s.adopted = nil, nil
	return json.Marshal(s.pending)
}

func (s *stagingSink) Commit(id uint64) error {
	s.log.commit(s.instance, id, s.pending)
	kept := s.pending[:0]
	for _, b := range s.pending {
		if b.ID > id {
			kept = append(kept, b)
		}
	}
	s.pending = kept
	return nil
}

// Recover commits the batches sealed up to id. An instance that did not run
// at checkpoint id (added since, restored at a higher parallelism) gets no
// state: it has nothing to finish.
func (s *stagingSink) Recover(id uint64, state []byte) error {
	s.current, s.adopted, s.pending = nil, nil, nil
	return s.RecoverRemoved(id, state)
}

// RecoverRemoved commits the batches up to id of a removed instance's state.
func (s *stagingSink) RecoverRemoved(id uint64, state []byte) error {
	if len(state) == 0 {
		return nil
	}
	var batches []sealedBatch
	if err := json.Unmarshal(state, &batches); err != nil {
		return fmt.Errorf("staging sink %d: checkpoint %d: %w", s.instance, id, err)
	}
	s.log.commit(s.instance, id, batches)
	return nil
}

// HandOff returns every transaction not committed and the records since
// the last checkpoint, its own and those it took over.
func (s *stagingSink) HandOff() ([]byte, error) {
	h := handedOff{Pending: s.pending, Open: append(s.adopted, openBatch{Writer: s.writer, Records: s.current})}
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

// stagedKeycount is keycount (source → keyed count with a slow stage) into
// a stagingSink at sinkP instances writing to log; prefix names its
// operators, so one graph can hold several independent pipelines.
func stagedKeycount(g *weir.Graph, prefix string, n int64, k, p, sinkP int, sleepMs float64, log *commitLog) {
	keys := keycount.Keys(k)
	events := weir.Generate(g, prefix+"source", n, func(i int64) keycount.Event {
		return keycount.Event{Key: keys[i%int64(k)], Seq: i}
	}, weir.Parallelism(p))
	counts := weir.NewValueState[int64](g, prefix+"count")
	sleepers := weir.NewSleepers(time.Duration(sleepMs * float64(time.Millisecond)))
	out := weir.Process(weir.KeyBy(events, func(e keycount.Event) string { return e.Key }), prefix+"count",
		func(ctx *weir.KeyedContext[string], e keycount.Event, out *weir.Emitter[keycount.Count]) error {
			sleepers[ctx.Instance()].Tick()
			c := counts.Get(ctx) + 1
			counts.Set(ctx, c)
			out.Emit(keycount.Count{Key: e.Key, Count: c})
			return nil
		}, weir.WithState(counts), weir.Parallelism(p))
	weir.ToSink(out, prefix+"sink", func(int) weir.Sink[keycount.Count] { return &stagingSink{log: log} }, weir.Parallelism(sinkP))
}

// onFirstCommit calls f (once) when the log first commits a transaction.
func (l *commitLog) onFirstCommit(f func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.hook = f
}
