package weir

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
)

// DiscardSink drops every record and counts them in counter (may be nil).
func DiscardSink[T any](counter *atomic.Int64) func(int) Sink[T] {
	return func(int) Sink[T] { return &discardSink[T]{counter: counter} }
}

type discardSink[T any] struct{ counter *atomic.Int64 }

func (d *discardSink[T]) Open(TaskInfo) error { return nil }
func (d *discardSink[T]) Finish() error       { return nil }
func (d *discardSink[T]) Close() error        { return nil }
func (d *discardSink[T]) Write(b []T) error {
	if d.counter != nil {
		d.counter.Add(int64(len(b)))
	}
	return nil
}

// lineWriter writes records as JSON lines, each write holding whole lines only,
// so instances appending to one file never split a line.
type lineWriter struct {
	buf []byte
	w   io.Writer
	mu  *sync.Mutex // shared by writers of one stream (stdout)
}

// flushAt is the buffered size after which lines are written.
const flushAt = 64 << 10

func (l *lineWriter) add(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %T as JSON: %w", v, err)
	}
	l.buf = append(append(l.buf, b...), '\n')
	if len(l.buf) >= flushAt {
		return l.flush()
	}
	return nil
}

func (l *lineWriter) flush() error {
	if len(l.buf) == 0 {
		return nil
	}
	if l.mu != nil {
		l.mu.Lock()
		defer l.mu.Unlock()
	}
	_, err := l.w.Write(l.buf)
	l.buf = l.buf[:0]
	return err
}

// StdoutSink writes every record as a JSON line to standard output.
func StdoutSink[T any]() func(int) Sink[T] {
	return func(int) Sink[T] { return &writerSink[T]{lw: lineWriter{w: os.Stdout, mu: &stdoutMu}} }
}

var stdoutMu sync.Mutex

type writerSink[T any] struct{ lw lineWriter }

func (s *writerSink[T]) Open(TaskInfo) error { return nil }
func (s *writerSink[T]) Close() error        { return s.lw.flush() }
func (s *writerSink[T]) Finish() error       { return s.lw.flush() }
func (s *writerSink[T]) Write(b []T) error {
	for i := range b {
		if err := s.lw.add(b[i]); err != nil {
			return err
		}
	}
	return s.lw.flush()
}
