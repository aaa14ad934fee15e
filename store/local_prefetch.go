package store

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
)

// localReadAhead is how many goroutines read a restore's local sections
// ahead of the one it delivers when each section gets a buffer of its own:
// most of a local read of a section into new memory is the page faults of
// that memory, which run in parallel (87 MB in 2 MB sections from the page
// cache into new buffers, on 2 cores: 292–312 ms with one reader, 202–204 ms
// with two, 186–191 ms with four).
const localReadAhead = 2

// sectionRead is one local section read, or why it could not be.
type sectionRead struct {
	data []byte
	err  error
}

// localPrefetch reads the local sections refs of a checkpoint, in order, on
// up to localReadAhead goroutines, each section into new memory of its own
// (its room in one shared buffer when they are large: sectionSlab); next
// hands them over in order. stop ends the readers, waits for them and
// withdraws the shared buffer's huge-page advice.
type localPrefetch struct {
	refs    []BlobRef
	bufs    [][]byte // per section, its room in one shared buffer (sectionSlab), or nil
	slab    []byte   // that buffer
	results []chan sectionRead
	taken   atomic.Int64 // the next section a reader takes
	halt    atomic.Bool
	wg      sync.WaitGroup
	k       int // the next section next hands over
}

// prefetchLocal starts reading refs of job's checkpoint ckpt from l.
func prefetchLocal(ctx context.Context, l *Local, job string, ckpt uint64, refs []BlobRef) *localPrefetch {
	p := &localPrefetch{refs: refs, results: make([]chan sectionRead, len(refs))}
	p.bufs, p.slab = sectionSlab(refs, &l.warm)
	for k := range p.results {
		p.results[k] = make(chan sectionRead, 1)
	}
	for range min(localReadAhead, runtime.GOMAXPROCS(0), len(refs)) {
		p.wg.Add(1)
		go p.read(ctx, &sectionFiles{l: l, job: job, ckpt: ckpt})
	}
	return p
}

// read takes the next section until none is left or stop was called.
func (p *localPrefetch) read(ctx context.Context, files *sectionFiles) {
	defer p.wg.Done()
	defer files.Close()
	for !p.halt.Load() {
		k := int(p.taken.Add(1)) - 1
		if k >= len(p.refs) {
			return
		}
		if err := ctx.Err(); err != nil {
			p.results[k] <- sectionRead{err: err}
			continue
		}
		var buf []byte
		if p.bufs != nil {
			buf = p.bufs[k]
		}
		data, err := files.readInto(p.refs[k], buf)
		p.results[k] <- sectionRead{data: data, err: err}
	}
}

// next is the next section in order.
func (p *localPrefetch) next() sectionRead {
	r := <-p.results[p.k]
	p.k++
	return r
}

// stop makes the readers end after the section each is reading and waits
// for them.
func (p *localPrefetch) stop() {
	p.halt.Store(true)
	p.wg.Wait()
	if p.slab != nil {
		hugePages(p.slab, false)
	}
}
