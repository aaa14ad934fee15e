// Package recordcodec encodes and decodes batches of user records ([]T) as
// msgpack without per-record reflection.
//
// For inspects T once with reflect and compiles, per field, an encode and a
// decode function that work on the record's memory through unsafe field
// offsets. The bytes AppendBatch writes are the bytes the library
// (github.com/vmihailenco/msgpack/v5) writes for []T with
// Encoder.UseCompactInts(true): every integer, whatever its Go width, in its
// smallest msgpack form (an int64 of 5 is one byte, not nine); floats keep
// their width. So the wire format stays readable with `nats sub` and
// decodable by msgpack.Unmarshal. DecodeBatch decodes that, what
// msgpack.Marshal writes with default options (fixed-width integers, as in
// older checkpoints) and what other msgpack writers commonly send (keys in
// any order, unknown keys, any integer width, nil); for input it does not
// handle itself (array-encoded structs, values of the wrong type) it
// validates the input and hands it to msgpack.Unmarshal, so results and
// errors are the library's. DecodeBatchWith can intern the decoded strings
// through a Strings cache, so that repeated keys do not cost an allocation
// each.
//
// Only plain shapes are compiled: T of kind bool, int*, uint* (not uintptr),
// float32/64, string or []byte, or a struct (not a pointer) whose exported
// fields are of those kinds or are such structs. Field names follow the
// library: the msgpack tag's name, else the Go name; "-" and unexported
// fields are left out. For reports ok=false, and the caller keeps using
// msgpack.Marshal/Unmarshal, for everything else: pointers, maps, other
// slices, arrays, interfaces, tag options (omitempty, as_array, inline...),
// embedded fields, two fields with one name, and types that implement
// msgpack.CustomEncoder/CustomDecoder, Marshaler/Unmarshaler or
// encoding.Binary/TextMarshaler/Unmarshaler (time.Time among them).
package recordcodec
