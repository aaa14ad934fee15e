package recordcodec

// Reader reads msgpack values from a byte slice, checking every length
// against the bytes left, for hand-written decoders of messages whose shape
// is fixed. Values read as the library's decoder reads them; a form it does
// not read on its fast path is an error, and the caller then falls back to
// the library.
type Reader struct{ d decoder }

// NewReader reads data from its start.
func NewReader(data []byte) *Reader { return &Reader{d: decoder{data: data}} }

// Pos is the offset of the next value.
func (r *Reader) Pos() int { return r.d.pos }

// MapLen reads a map header (nil gives -1).
func (r *Reader) MapLen() (int, error) { return r.d.readMapLen() }

// String reads a str or bin value into a new string.
func (r *Reader) String() (string, error) { return r.d.readString() }

// Int reads any integer (nil gives 0); an unsigned 64-bit value keeps its
// bits.
func (r *Reader) Int() (int64, error) { return r.d.readInt() }
