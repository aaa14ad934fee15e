package jetstream

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/weirstream/weir"
)

// Headers a sink sets on every message it publishes with checkpoints.
const (
	// HeaderSink names the sink instance: "<job>/<operator>/<instance>".
	HeaderSink = "Weir-Sink"
	// HeaderBatch names the sealed batch: "<checkpoint>-<nonce>".
	HeaderBatch = "Weir-Batch"
	// HeaderIndex is the message's position in its batch, from 0.
	HeaderIndex = "Weir-Index"
)

// SinkConfig says where a JetStream sink publishes.
type SinkConfig[T any] struct {
	Conn
	// Stream is the stream that stores the sink's subjects; it must exist. A
	// restore reads its newest messages to find what was already published.
	Stream string
	// Subject is where every record goes, unless SubjectOf is set.
	Subject string
	// SubjectOf picks a record's subject.
	SubjectOf func(T) string
	// Encode turns a record into a payload; the default publishes []byte
	// records as they are and any other type as JSON.
	Encode func(T) ([]byte, error)
}

// ToStream adds a sink operator publishing s to cfg.Stream. With checkpoints
// its output is exactly once (see the package documentation); without, every
// record is published as it arrives.
func ToStream[T any](s weir.Stream[T], name string, cfg SinkConfig[T], opts ...weir.OpOption) {
	weir.ToSink(s, name, func(int) weir.Sink[T] { return &sink[T]{cfg: cfg} }, opts...)
}

// sink is one instance of a JetStream sink.
type sink[T any] struct {
	cfg      SinkConfig[T]
	js       jetstream.JetStream
	nc       *nats.Conn // owned connection, or nil
	stream   jetstream.Stream
	id       string // HeaderSink value
	twoPhase bool
	current  []staged // written since the last checkpoint
	pending  []batch  // sealed, not yet committed, oldest first
}

func (s *sink[T]) Open(info weir.TaskInfo) error {
	switch {
	case s.cfg.Stream == "":
		return errors.New("jetstream sink: no stream named")
	case s.cfg.Subject == "" && s.cfg.SubjectOf == nil:
		return fmt.Errorf("jetstream sink %s: no Subject or SubjectOf", s.cfg.Stream)
	}
	if s.cfg.Encode == nil {
		s.cfg.Encode = encodeDefault[T]
	}
	s.id = fmt.Sprintf("%s/%s/%d", info.Job, info.Operator, info.Instance)
	s.twoPhase = info.Checkpointing
	js, nc, err := s.cfg.Conn.open("weir " + s.id)
	if err != nil {
		return fmt.Errorf("jetstream sink %s: %w", s.cfg.Stream, err)
	}
	s.js, s.nc = js, nc
	ctx, cancel := apiContext()
	defer cancel()
	if s.stream, err = js.Stream(ctx, s.cfg.Stream); err != nil {
		return fmt.Errorf("jetstream sink: stream %q: %w", s.cfg.Stream, err)
	}
	return nil
}

func (s *sink[T]) Close() error {
	if s.nc != nil {
		s.nc.Close()
		s.nc = nil
	}
	return nil
}

func (s *sink[T]) subject(v T) string {
	if s.cfg.SubjectOf != nil {
		return s.cfg.SubjectOf(v)
	}
	return s.cfg.Subject
}

// Write stages the batch (with checkpoints) or publishes it (without).
func (s *sink[T]) Write(recs []T) error {
	start := len(s.current)
	for _, v := range recs {
		data, err := s.cfg.Encode(v)
		if err != nil {
			return fmt.Errorf("jetstream sink %s: %w", s.id, err)
		}
		s.current = append(s.current, staged{Subject: s.subject(v), Data: data})
	}
	if s.twoPhase {
		return nil
	}
	err := s.publish(s.current[start:], nil, nil)
	s.current = s.current[:0]
	return err
}

// Finish has nothing to flush: without checkpoints Write published, with
// them the final checkpoint commits the rest.
func (s *sink[T]) Finish() error { return nil }

// PrepareCommit seals what was written since the last checkpoint as the
// batch of checkpoint id and returns every uncommitted batch, with the
// stream's last sequence now, as the checkpoint's state.
func (s *sink[T]) PrepareCommit(id uint64) ([]byte, error) {
	nonce, err := newNonce()
	if err != nil {
		return nil, err
	}
	s.pending = append(s.pending, batch{Checkpoint: id, Nonce: nonce, Msgs: s.current, Writer: s.id})
	s.current = nil
	last, err := s.lastSeq()
	if err != nil {
		return nil, err
	}
	return encodeSinkState(sinkState{ScanFrom: last, Batches: s.pending, Writer: s.id})
}

// Commit publishes every batch sealed up to checkpoint id, oldest first,
// with message ids JetStream de-duplicates, and waits for their acks.
func (s *sink[T]) Commit(id uint64) error {
	for len(s.pending) > 0 && s.pending[0].Checkpoint <= id {
		b := &s.pending[0]
		if err := s.publish(b.Msgs, b, nil); err != nil {
			return fmt.Errorf("jetstream sink %s: commit batch %s: %w", s.id, b.id(), err)
		}
		s.pending = s.pending[1:]
	}
	return nil
}

// Recover makes the stream hold exactly what checkpoint id covers: it reads
// the stream after the state's ScanFrom for this instance's messages,
// deletes those of batches the checkpoint does not hold (published for a
// later checkpoint than the one restored), and publishes the messages of
// the checkpoint's batches that are not there yet.
func (s *sink[T]) Recover(id uint64, state []byte) error {
	s.current, s.pending = nil, nil
	if len(state) == 0 {
		return nil
	}
	st, err := decodeSinkState(state)
	if err != nil {
		return fmt.Errorf("jetstream sink %s: checkpoint %d: %w", s.id, id, err)
	}
	return s.recoverAs(id, s.id, st)
}

// RecoverRemoved is Recover for the state of checkpoint id of an instance
// a restore at fewer instances removed: its messages are published, and
// deleted where stale, under its own Weir-Sink value.
func (s *sink[T]) RecoverRemoved(id uint64, state []byte) error {
	if len(state) == 0 {
		return nil
	}
	st, err := decodeSinkState(state)
	if err != nil {
		return fmt.Errorf("jetstream sink %s: removed instance's checkpoint %d: %w", s.id, id, err)
	}
	if st.Writer == "" {
		if len(st.Batches) == 0 {
			return nil
		}
		return fmt.Errorf("jetstream sink %s: removed instance's checkpoint %d was written before sinks recorded their identity: restore it at its own parallelism", s.id, id)
	}
	return s.recoverAs(id, st.Writer, st)
}

// recoverAs makes the stream hold what st (of writer, checkpoint id)
// covers: it deletes writer's messages after st.ScanFrom of batches st
// does not hold, and publishes the messages of st's batches not stored.
func (s *sink[T]) recoverAs(id uint64, writer string, st sinkState) error {
	present, stale, err := s.scan(st, writer)
	if err != nil {
		return fmt.Errorf("jetstream sink %s: checkpoint %d: %w", s.id, id, err)
	}
	ctx, cancel := apiContext()
	defer cancel()
	for _, seq := range stale {
		if err := s.stream.DeleteMsg(ctx, seq); err != nil && !errors.Is(err, jetstream.ErrMsgNotFound) {
			return fmt.Errorf("jetstream sink %s: delete message %d published after checkpoint %d: %w", s.id, seq, id, err)
		}
	}
	for i := range st.Batches {
		b := &st.Batches[i]
		if b.Writer == "" {
			b.Writer = writer
		}
		if err := s.publish(b.Msgs, b, present[b.key()]); err != nil {
			return fmt.Errorf("jetstream sink %s: recover batch %s: %w", s.id, b.id(), err)
		}
	}
	return nil
}

// HandOff returns the sealed, uncommitted batches and the messages written
// since the last checkpoint, and keeps none of them.
func (s *sink[T]) HandOff() ([]byte, error) {
	h := handOff{Batches: s.pending, Open: s.current}
	s.pending, s.current = nil, nil
	b, err := msgpack.Marshal(&h)
	if err != nil {
		return nil, fmt.Errorf("jetstream sink %s: hand off: %w", s.id, err)
	}
	return b, nil
}

// TakeOver adopts what a removed instance handed off: its batches become
// this instance's (published under its Weir-Sink, with its checkpoints of
// the same or a later id); its open messages go before this instance's, to
// be sealed at the next checkpoint.
//
// Adopted batches take this instance's identity because a later rescale
// may add an instance with the removed one's number, whose Recover deletes
// messages under that identity it does not hold. The removed instance never
// published them, and a restore of a checkpoint from before the rescale
// publishes them again under its identity, while this instance's Recover
// deletes its copies, which were published after that checkpoint.
func (s *sink[T]) TakeOver(state []byte) error {
	var h handOff
	if err := msgpack.Unmarshal(state, &h); err != nil {
		return fmt.Errorf("jetstream sink %s: take over (%d bytes): %w", s.id, len(state), err)
	}
	for i := range h.Batches {
		h.Batches[i].Writer = s.id
	}
	s.pending = append(s.pending, h.Batches...)
	slices.SortStableFunc(s.pending, func(a, b batch) int { return cmp.Compare(a.Checkpoint, b.Checkpoint) })
	s.current = append(h.Open, s.current...)
	return nil
}

// scan reads, headers only, the stream's messages after st.ScanFrom. It
// returns, per batch of st (by writer and id), the indexes already stored,
// and the sequences of writer's messages from batches st does not hold.
func (s *sink[T]) scan(st sinkState, writer string) (map[string]map[int]bool, []uint64, error) {
	held := map[string]bool{}
	for i := range st.Batches {
		b := st.Batches[i]
		if b.Writer == "" {
			b.Writer = writer
		}
		held[b.key()] = true
	}
	last, err := s.lastSeq()
	if err != nil || last <= st.ScanFrom {
		return nil, nil, err
	}
	ctx, cancel := apiContext()
	defer cancel()
	cons, err := s.stream.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{
		DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: st.ScanFrom + 1, HeadersOnly: true})
	if err != nil {
		return nil, nil, fmt.Errorf("scan after sequence %d: %w", st.ScanFrom, err)
	}
	present := map[string]map[int]bool{}
	var stale []uint64
	for seq := st.ScanFrom; seq < last; {
		mb, err := cons.FetchNoWait(512)
		if err != nil {
			return nil, nil, fmt.Errorf("scan after sequence %d: %w", seq, err)
		}
		got := false
		for msg := range mb.Messages() {
			got = true
			meta, err := msg.Metadata()
			if err != nil {
				return nil, nil, fmt.Errorf("scan after sequence %d: %w", seq, err)
			}
			seq = meta.Sequence.Stream
			from := msg.Headers().Get(HeaderSink)
			key := batchKey(from, msg.Headers().Get(HeaderBatch))
			if !held[key] {
				if from == writer {
					stale = append(stale, seq)
				}
				continue
			}
			idx, err := strconv.Atoi(msg.Headers().Get(HeaderIndex))
			if err != nil {
				return nil, nil, fmt.Errorf("message %d of batch %s: bad %s header: %w", seq, key, HeaderIndex, err)
			}
			if present[key] == nil {
				present[key] = map[int]bool{}
			}
			present[key][idx] = true
		}
		if err := mb.Error(); err != nil && !errors.Is(err, jetstream.ErrNoMessages) {
			return nil, nil, fmt.Errorf("scan after sequence %d: %w", seq, err)
		}
		if !got {
			break // the rest was deleted
		}
	}
	return present, stale, nil
}

// publish publishes msgs and waits for every ack. With a batch b, each
// message carries the batch's headers and a message id JetStream
// de-duplicates; messages whose index is in skip are already stored.
func (s *sink[T]) publish(msgs []staged, b *batch, skip map[int]bool) error {
	if len(msgs) == 0 {
		return nil
	}
	futures := make([]jetstream.PubAckFuture, 0, min(len(msgs), ackWindow))
	for i, m := range msgs {
		if skip[i] {
			continue
		}
		msg := &nats.Msg{Subject: m.Subject, Data: m.Data}
		var opts []jetstream.PublishOpt
		if b != nil {
			writer := cmp.Or(b.Writer, s.id)
			msg.Header = nats.Header{}
			msg.Header.Set(HeaderSink, writer)
			msg.Header.Set(HeaderBatch, b.id())
			msg.Header.Set(HeaderIndex, strconv.Itoa(i))
			opts = append(opts, jetstream.WithMsgID(writer+"/"+b.id()+"/"+strconv.Itoa(i)))
		}
		f, err := s.js.PublishMsgAsync(msg, opts...)
		if err != nil {
			return fmt.Errorf("publish to %s: %w", m.Subject, err)
		}
		futures = append(futures, f)
		if len(futures) == ackWindow {
			if err := waitAcks(futures); err != nil {
				return err
			}
			futures = futures[:0]
		}
	}
	return waitAcks(futures)
}

// ackWindow is how many publishes a sink has in flight before it waits for
// their acks (below the client's limit of outstanding async publishes).
const ackWindow = 1024

// waitAcks waits for every publish to be acknowledged.
func waitAcks(futures []jetstream.PubAckFuture) error {
	ctx, cancel := apiContext()
	defer cancel()
	for _, f := range futures {
		select {
		case <-f.Ok():
		case err := <-f.Err():
			return fmt.Errorf("publish to %s: %w", f.Msg().Subject, err)
		case <-ctx.Done():
			return fmt.Errorf("publish to %s: no ack within %v", f.Msg().Subject, apiTimeout)
		}
	}
	return nil
}

// lastSeq is the stream's last sequence now.
func (s *sink[T]) lastSeq() (uint64, error) {
	ctx, cancel := apiContext()
	defer cancel()
	si, err := s.stream.Info(ctx)
	if err != nil {
		return 0, fmt.Errorf("stream %q info: %w", s.cfg.Stream, err)
	}
	return si.State.LastSeq, nil
}

// newNonce is a random batch nonce.
func newNonce() (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("batch nonce: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

var _ weir.HandOffSink[[]byte] = (*sink[[]byte])(nil)
