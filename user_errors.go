package weir

import (
	"fmt"
	"runtime/debug"

	"github.com/weirstream/weir/internal/plan"
)

// maxRecordText bounds how much of a failing record an error shows.
const maxRecordText = 200

// RecordError is a user function's failure on one record.
type RecordError struct {
	Operator string
	Record   string // the record, printed and truncated
	Err      error
	Stack    string // set when the function panicked
}

// Error names the operator, the record and the cause.
func (e *RecordError) Error() string {
	return fmt.Sprintf("operator %q on record %s: %v", e.Operator, e.Record, e.Err)
}

// Unwrap gives the cause.
func (e *RecordError) Unwrap() error { return e.Err }

// showRecord prints a record safely and truncated.
func showRecord(rec any) (s string) {
	defer func() {
		if r := recover(); r != nil {
			s = fmt.Sprintf("<%T: unprintable: %v>", rec, r)
		}
	}()
	s = fmt.Sprintf("%+v", rec)
	if len(s) > maxRecordText {
		s = s[:maxRecordText] + fmt.Sprintf("…(%d bytes)", len(s))
	}
	return s
}

// guard runs a batch of user calls; a panic becomes a RecordError naming the
// record at *cur.
func guard(op string, recs plan.Batch, cur *int, body func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if sd, ok := r.(*StateNotDeclaredError); ok {
				err = sd // a mistake in the graph, not in the record
				return
			}
			var rec any
			if *cur >= 0 && *cur < recs.Len() {
				rec = recs.At(*cur)
			}
			err = &RecordError{Operator: op, Record: showRecord(rec), Err: fmt.Errorf("panic: %v", r), Stack: string(debug.Stack())}
		}
	}()
	return body()
}
