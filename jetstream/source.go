package jetstream

import (
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/weirstream/weir"
)

// SourceConfig says what a JetStream source reads.
type SourceConfig[T any] struct {
	Conn
	// Stream is the JetStream stream to read; it must exist.
	Stream string
	// Subjects cuts the stream into splits: split i reads the messages whose
	// subject matches Subjects[i] (wildcards allowed; the filters should not
	// overlap, or a message is read once per filter it matches). Empty: the
	// whole stream is one split.
	Subjects []string
	// Bounded makes the source end once each split has read every message the
	// stream held when the instance opened (its last sequence then); otherwise
	// it waits for new messages forever.
	Bounded bool
	// Decode turns a message into a record; the default takes the payload as
	// is for []byte records and decodes JSON for any other type.
	Decode func(subject string, data []byte) (T, error)
}

// idleWait is how long Read waits for a message when none is available, so
// an idle unbounded source neither spins nor keeps its task from its control
// messages for long.
const idleWait = 50 * time.Millisecond

// FromStream adds a source operator reading cfg.Stream. Its position is one
// split per subject filter at the stream sequence last read, so a restore
// resumes each filter after the last message the checkpoint covers, at any
// parallelism (see weir.FromSplitSource).
func FromStream[T any](g *weir.Graph, name string, cfg SourceConfig[T], opts ...weir.OpOption) weir.Stream[T] {
	return weir.FromSplitSource(g, name, func(instance int) weir.SplitSource[T] {
		return &source[T]{cfg: cfg, instance: instance}
	}, opts...)
}

// source is one instance of a JetStream source.
type source[T any] struct {
	cfg      SourceConfig[T]
	instance int
	js       jetstream.JetStream
	nc       *nats.Conn // owned connection, or nil
	stream   jetstream.Stream
	bound    uint64 // the stream's last sequence at Open (bounded mode)
	splits   []weir.Split
	readers  []*splitReader // per split, started at the first Read
	queue    chan delivery  // what the splits' consumers delivered
	held     *delivery      // taken from the queue while waiting, read next
	closing  chan struct{}  // closed by Close: consumers stop delivering
}

// splitReader reads one split: an ordered consumer delivering into the
// instance's queue.
type splitReader struct {
	cc   jetstream.ConsumeContext // nil once done before it started
	done bool
}

// delivery is one message of split index split (into source.splits).
type delivery struct {
	split int
	msg   jetstream.Msg
}

// queueLen bounds the messages delivered and not yet read, per instance.
const queueLen = 1024

func (s *source[T]) subjects() int { return max(1, len(s.cfg.Subjects)) }

// Open connects, finds the stream and gives the instance its first-run
// splits: split i goes to instance i mod parallelism.
func (s *source[T]) Open(info weir.TaskInfo) error {
	if s.cfg.Stream == "" {
		return errors.New("jetstream source: no stream named")
	}
	if s.cfg.Decode == nil {
		s.cfg.Decode = func(_ string, data []byte) (T, error) { return decodeDefault[T](data) }
	}
	js, nc, err := s.cfg.Conn.open(fmt.Sprintf("weir %s %s[%d]", info.Job, info.Operator, info.Instance))
	if err != nil {
		return fmt.Errorf("jetstream source %s: %w", s.cfg.Stream, err)
	}
	s.js, s.nc = js, nc
	s.queue, s.closing = make(chan delivery, queueLen), make(chan struct{})
	ctx, cancel := apiContext()
	defer cancel()
	if s.stream, err = js.Stream(ctx, s.cfg.Stream); err != nil {
		return fmt.Errorf("jetstream source: stream %q: %w", s.cfg.Stream, err)
	}
	if s.cfg.Bounded {
		si, err := s.stream.Info(ctx)
		if err != nil {
			return fmt.Errorf("jetstream source: stream %q info: %w", s.cfg.Stream, err)
		}
		s.bound = si.State.LastSeq
	}
	var splits []weir.Split
	for i := s.instance; i < s.subjects(); i += info.Parallelism {
		splits = append(splits, weir.Split{ID: i, Of: s.subjects()})
	}
	return s.AssignSplits(splits)
}

// Close stops the consumers, waits for them and releases the instance's
// connection (if it made one).
func (s *source[T]) Close() error {
	if s.closing != nil {
		close(s.closing)
		s.closing = nil
	}
	s.stopReaders()
	if s.nc != nil {
		s.nc.Close()
		s.nc = nil
	}
	return nil
}

// Splits is the instance's splits, each at the last stream sequence read.
func (s *source[T]) Splits() []weir.Split { return append([]weir.Split(nil), s.splits...) }

// AssignSplits makes the instance read splits, each after its offset.
func (s *source[T]) AssignSplits(splits []weir.Split) error {
	for _, sp := range splits {
		if sp.Of != s.subjects() || sp.ID < 0 || sp.ID >= sp.Of || sp.Offset < 0 {
			return fmt.Errorf("jetstream source %s: split %d of %d at sequence %d does not fit %d subject filters",
				s.cfg.Stream, sp.ID, sp.Of, sp.Offset, s.subjects())
		}
	}
	s.stopReaders()
	s.splits = append([]weir.Split(nil), splits...)
	s.readers = make([]*splitReader, len(splits))
	return nil
}

// stopReaders stops every split's consumer and waits until it delivers no
// more; what it queued is dropped (its splits' offsets do not count it).
func (s *source[T]) stopReaders() {
	for _, r := range s.readers {
		if r != nil && r.cc != nil {
			r.cc.Stop()
			for closed := r.cc.Closed(); closed != nil; {
				select {
				case <-closed:
					closed = nil
				case <-s.queue: // frees a delivery blocked on a full queue
				}
			}
		}
	}
	s.readers, s.held = nil, nil
	for len(s.queue) > 0 {
		<-s.queue
	}
}

// Offset is the highest stream sequence the instance's splits have read.
func (s *source[T]) Offset() int64 {
	var o int64
	for _, sp := range s.splits {
		o = max(o, sp.Offset)
	}
	return o
}

// SeekTo moves the instance's one split to stream sequence offset.
func (s *source[T]) SeekTo(offset int64) error {
	if offset < 0 || len(s.splits) != 1 {
		return fmt.Errorf("jetstream source %s: seek to %d with %d splits", s.cfg.Stream, offset, len(s.splits))
	}
	s.stopReaders()
	s.splits[0].Offset = offset
	s.readers = make([]*splitReader, 1)
	return nil
}

// Read takes what the splits' consumers delivered, without waiting. When
// nothing is there it waits up to idleWait for a message and keeps it for
// the next call, returning none: a call either waits or reads, so the task
// can tell an idle source from a slow one.
func (s *source[T]) Read(buf []T) (int, bool, error) {
	if err := s.startReaders(); err != nil {
		return 0, false, err
	}
	if s.done() || len(buf) == 0 {
		return 0, s.done(), nil
	}
	if s.held == nil && len(s.queue) == 0 {
		select {
		case d := <-s.queue:
			s.held = &d
		case <-time.After(idleWait):
		}
		return 0, false, nil
	}
	n := 0
	for n < len(buf) {
		var d delivery
		if s.held != nil {
			d, s.held = *s.held, nil
		} else {
			select {
			case d = <-s.queue:
			default:
				return n, s.done(), nil
			}
		}
		ok, err := s.take(d, &buf[n])
		if err != nil {
			return n, false, err
		}
		if ok {
			n++
		}
	}
	return n, s.done(), nil
}

// take decodes a delivered message into *v and moves its split's offset;
// false when the message is past the bound (bounded mode) and not read.
func (s *source[T]) take(d delivery, v *T) (bool, error) {
	r := s.readers[d.split]
	if r.done {
		return false, nil
	}
	meta, err := d.msg.Metadata()
	if err != nil {
		return false, fmt.Errorf("jetstream source %s: message metadata: %w", s.cfg.Stream, err)
	}
	seq := meta.Sequence.Stream
	if s.cfg.Bounded && seq > s.bound {
		r.done = true
		return false, nil
	}
	if *v, err = s.cfg.Decode(d.msg.Subject(), d.msg.Data()); err != nil {
		return false, fmt.Errorf("jetstream source %s: message %d on %s: %w", s.cfg.Stream, seq, d.msg.Subject(), err)
	}
	s.splits[d.split].Offset = int64(seq)
	if s.cfg.Bounded && (seq >= s.bound || meta.NumPending == 0) {
		r.done = true
	}
	return true, nil
}

// done reports whether every split has read to the bound (bounded mode; at
// once for an instance without splits).
func (s *source[T]) done() bool {
	if len(s.splits) == 0 {
		return true
	}
	if !s.cfg.Bounded {
		return false
	}
	for _, r := range s.readers {
		if r == nil || !r.done {
			return false
		}
	}
	return true
}

// startReaders starts, once, an ordered consumer per split on the split's
// subject filter after its offset, delivering into the queue. In bounded
// mode a split with nothing to read up to the bound is done at once.
func (s *source[T]) startReaders() error {
	for i, sp := range s.splits {
		if s.readers[i] != nil {
			continue
		}
		r := &splitReader{}
		if s.cfg.Bounded && uint64(sp.Offset) >= s.bound {
			r.done = true
			s.readers[i] = r
			continue
		}
		cfg := jetstream.OrderedConsumerConfig{DeliverPolicy: jetstream.DeliverAllPolicy}
		if sp.Offset > 0 {
			cfg.DeliverPolicy, cfg.OptStartSeq = jetstream.DeliverByStartSequencePolicy, uint64(sp.Offset)+1
		}
		if len(s.cfg.Subjects) > 0 {
			cfg.FilterSubjects = []string{s.cfg.Subjects[sp.ID]}
		}
		ctx, cancel := apiContext()
		cons, err := s.stream.OrderedConsumer(ctx, cfg)
		if err == nil && s.cfg.Bounded {
			var info *jetstream.ConsumerInfo
			if info, err = cons.Info(ctx); err == nil && info.NumPending == 0 {
				r.done = true
			}
		}
		cancel()
		if err != nil {
			return fmt.Errorf("jetstream source %s: consumer for split %d after sequence %d: %w", s.cfg.Stream, sp.ID, sp.Offset, err)
		}
		s.readers[i] = r
		if r.done {
			continue
		}
		split, queue, closing := i, s.queue, s.closing
		r.cc, err = cons.Consume(func(m jetstream.Msg) {
			select {
			case queue <- delivery{split: split, msg: m}:
			case <-closing:
			}
		}, jetstream.PullMaxMessages(queueLen/2))
		if err != nil {
			return fmt.Errorf("jetstream source %s: consume split %d after sequence %d: %w", s.cfg.Stream, sp.ID, sp.Offset, err)
		}
	}
	return nil
}
