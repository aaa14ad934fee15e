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

// commitLog is what a stagingSink makes visible: per instance, the records
// of every checkpoint it committed, in commit order, and the newest
// checkpoint it committed (which makes Commit and Recover idempotent).
type commitLog struct {
	mu        sync.Mutex
	committed map[int]uint64
	records   map[int][]keycount.Count
}

func newCommitLog() *commitLog {
	return &commitLog{committed: map[int]uint64{}, records: map[int][]keycount.Count{}}
}

// commit makes the sealed batches of instance up to id visible, each once.
func (l *commitLog) commit(instance int, id uint64, batches []sealedBatch) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, b := range batches {
		if b.ID > id || b.ID <= l.committed[instance] {
			continue
		}
		l.records[instance] = append(l.records[instance], b.Records...)
		l.committed[instance] = b.ID
	}
}

// verify checks that the committed output is every key's counts 1..n/k,
// each once, and that within each instance a key's counts increase.
func (l *commitLog) verify(t *testing.T, n int64, k int) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	seen := map[keycount.Count]int{}
	total := 0
	for inst, recs := range l.records {
		last := map[string]int64{}
		for _, c := range recs {
			if c.Count <= last[c.Key] {
				t.Fatalf("instance %d committed %s count %d after %d", inst, c.Key, c.Count, last[c.Key])
			}
			last[c.Key] = c.Count
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

// sealedBatch is what a stagingSink wrote before checkpoint ID.
type sealedBatch struct {
	ID      uint64
	Records []keycount.Count
}

// stagingSink is a two-phase sink that runs at any parallelism: each
// instance stages its records, seals them per checkpoint (its checkpoint
// state is every batch it sealed and has not committed) and appends them to
// a commitLog when the checkpoint completes.
type stagingSink struct {
	log      *commitLog
	instance int
	current  []keycount.Count
	pending  []sealedBatch
}

func (s *stagingSink) Open(info weir.TaskInfo) error {
	s.instance = info.Instance
	return nil
}
func (s *stagingSink) Finish() error { return nil }
func (s *stagingSink) Close() error  { return nil }

func (s *stagingSink) Write(b []keycount.Count) error {
	s.current = append(s.current, b...)
	return nil
}

func (s *stagingSink) PrepareCommit(id uint64) ([]byte, error) {
	s.pending = append(s.pending, sealedBatch{ID: id, Records: s.current})
	s.current = nil
	return json.Marshal(s.pending)
}

func (s *stagingSink) Commit(id uint64) error {
	s.log.commit(s.instance, id, s.pending)
	for len(s.pending) > 0 && s.pending[0].ID <= id {
		s.pending = s.pending[1:]
	}
	return nil
}

// Recover commits the batches sealed up to id. An instance that did not run
// at checkpoint id (added since, restored at a higher parallelism) gets no
// state: it has nothing to finish.
func (s *stagingSink) Recover(id uint64, state []byte) error {
	s.current, s.pending = nil, nil
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
