package store

// slabMin is the fewest bytes of local sections worth one shared buffer.
const slabMin = 4 << 20

// slabMax bounds a shared buffer; larger reads (or sizes no blob can have)
// give each section a buffer of its own.
const slabMax = 8 << 30

// sectionSlab returns, for each section of refs that is read at an offset
// (Whole > 0) and is not empty, a zero-length buffer with room for exactly that section,
// all cut from one allocation, slab: memory warm faulted in ahead when it
// has enough left (Prewarm), else new memory that the operating system is
// asked to back with huge pages (hugePages; the caller withdraws the advice once the
// sections are read); nil entries get buffers of their own. A
// restore reads most of its sections from a node's own disk into memory the
// process never touched, and the page faults of that memory are most of the
// read: 90 MB in 2 MB sections into new buffers took 404–452 ms in a new
// process, into one buffer backed by huge pages 123–135 ms, on a machine
// whose page faults are slow. The sections' buffers share one allocation:
// it lives as long as any of them (restored state adopts its bytes), which
// is at most the bytes restored.
func sectionSlab(refs []BlobRef, warm *warmMemory) (rooms [][]byte, slab []byte) {
	var total int64
	for _, r := range refs {
		if r.Whole <= 0 || r.Size == 0 {
			continue // read whole, or nothing to read
		}
		if r.Size < 0 || r.Size > slabMax || r.Offset < 0 || r.Offset+r.Size > r.Whole {
			return nil, nil // readInto reports it
		}
		if total += r.Size; total > slabMax {
			return nil, nil
		}
	}
	if total < slabMin {
		return nil, nil
	}
	if slab = warm.take(total); slab == nil {
		slab = make([]byte, total)
	}
	hugePages(slab, true)
	rooms = make([][]byte, len(refs))
	var off int64
	for k, r := range refs {
		if r.Whole <= 0 || r.Size == 0 {
			continue
		}
		rooms[k] = slab[off : off : off+r.Size]
		off += r.Size
	}
	return rooms, slab
}
