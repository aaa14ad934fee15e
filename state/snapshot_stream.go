package state

import (
	"fmt"
	"io"
)

// streamChunk is how much EncodeStream gathers before it writes: a write
// of about a key group, made while the group's bytes are still in cache.
const streamChunk = 1 << 20

// streamAlign is what EncodeStream's writes but the last are whole
// multiples of: a store that writes past the page cache (direct I/O)
// takes such writes from the encoder's buffer as they are, uncopied.
const streamAlign = 4096

// Streamed is where EncodeStream wrote the key groups' blobs.
type Streamed struct {
	Bytes    int64            // written in all
	Sections map[int][2]int64 // key group → [offset, size] in what was written
	Deltas   map[int]bool     // the groups written as deltas
	CRCs     map[int]uint32   // key group → CRC-32C of its blob
}

// EncodeStream is EncodeAppend that writes the groups' blobs to w, in the
// order of Groups, instead of keeping them: each group is appended to buf
// and buf is written once it holds streamChunk bytes or more, so about a
// group is held at a time. It returns buf for reuse. After a failed write
// it goes on encoding without writing, so that the task never has to
// encode what is left, and returns the write's error. An encoding error
// ends it at once, as in EncodeAppend.
func (s *AsyncSnapshot) EncodeStream(w io.Writer, buf []byte, useDelta func(g int) bool) (Streamed, []byte, error) {
	out := Streamed{Sections: make(map[int][2]int64, len(s.groups)), Deltas: map[int]bool{}, CRCs: make(map[int]uint32, len(s.groups))}
	var werr error
	// flush writes buf's whole blocks of streamAlign bytes, or all of it
	// at the end, and moves what is left to its start.
	flush := func(buf []byte, end bool) []byte {
		k := len(buf)
		if !end {
			k &^= streamAlign - 1
		}
		if werr == nil && k > 0 {
			if n, err := w.Write(buf[:k]); err != nil || n != k {
				werr = fmt.Errorf("state: write snapshot after %d bytes: %w", out.Bytes, orShortWrite(err))
			}
		}
		out.Bytes += int64(k)
		return buf[:copy(buf, buf[k:])]
	}
	buf, err := s.appendGroups(buf[:0], useDelta, func(buf []byte, g, start int, delta bool) []byte {
		out.Sections[g] = [2]int64{out.Bytes + int64(start), int64(len(buf) - start)}
		out.CRCs[g] = sealedCRC(buf[start:])
		if delta {
			out.Deltas[g] = true
		}
		if len(buf) >= streamChunk {
			return flush(buf, false)
		}
		return buf
	})
	if err != nil {
		return out, buf, err
	}
	return out, flush(buf, true), werr
}

// orShortWrite is err, or io.ErrShortWrite for a short write without one.
func orShortWrite(err error) error {
	if err == nil {
		return io.ErrShortWrite
	}
	return err
}
