package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// objectIdle is how long a read of an object waits for its next chunk
// before it checks that the object and its chunks still exist.
const objectIdle = 2 * time.Second

// objectBatch is how many chunks one pull asks for (128 KiB each by
// default: 8 MiB).
const objectBatch = 64

// getObject reads a whole object of job's bucket; a missing object wraps
// ErrNotFound and one whose bytes do not match its digest wraps ErrCorrupt.
//
// It reads the object's chunks with an ordered pull consumer of its own
// rather than ObjectStore.Get: Get subscribes to the chunks after reading
// the object's info, so an object deleted in between (its chunks purged)
// never delivers a chunk, and its read waits until its context's deadline.
// Here a pull that brings nothing for objectIdle checks the object: deleted
// wraps ErrNotFound, chunks gone wraps ErrCorrupt, otherwise it pulls again.
func (s *JetStream) getObject(ctx context.Context, obs jetstream.ObjectStore, job, name string) ([]byte, error) {
	info, err := obs.GetInfo(ctx, name)
	switch {
	case errors.Is(err, jetstream.ErrObjectNotFound):
		return nil, fmt.Errorf("object %s: %w", name, ErrNotFound)
	case err != nil:
		return nil, fmt.Errorf("object %s: %w", name, err)
	case info.Opts != nil && info.Opts.Link != nil:
		return nil, fmt.Errorf("object %s: a link, which weir never writes: %w", name, ErrCorrupt)
	}
	data, err := s.readChunks(ctx, obs, bucketName(s.cfg.prefix, job), name, info)
	if err != nil {
		return nil, fmt.Errorf("object %s: %w", name, err)
	}
	return data, nil
}

// readChunks pulls the chunks of the object info describes and checks them
// against its size and digest.
func (s *JetStream) readChunks(ctx context.Context, obs jetstream.ObjectStore, bucket, name string, info *jetstream.ObjectInfo) ([]byte, error) {
	want, err := jetstream.DecodeObjectDigest(info.Digest)
	if err != nil && info.Size > 0 {
		return nil, fmt.Errorf("digest %q: %v: %w", info.Digest, err, ErrCorrupt)
	}
	if info.Size == 0 || info.Chunks == 0 {
		if info.Size != 0 || info.Chunks != 0 {
			return nil, fmt.Errorf("%d bytes in %d chunks: %w", info.Size, info.Chunks, ErrCorrupt)
		}
		return []byte{}, nil
	}
	chunks := fmt.Sprintf("$O.%s.C.%s", bucket, info.NUID)
	cons, err := s.js.OrderedConsumer(ctx, "OBJ_"+bucket, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{chunks}, InactiveThreshold: 5 * time.Second})
	if err != nil {
		return nil, fmt.Errorf("read chunks: %w", err)
	}
	buf := bytes.NewBuffer(make([]byte, 0, info.Size))
	digest := sha256.New()
	for got := 0; got < int(info.Chunks); {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		wait := s.idle
		if d, ok := ctx.Deadline(); ok && time.Until(d) < wait {
			wait = max(time.Until(d), time.Millisecond)
		}
		batch, err := cons.Fetch(min(objectBatch, int(info.Chunks)-got), jetstream.FetchMaxWait(wait))
		if err != nil {
			return nil, fmt.Errorf("read chunks: %w", err)
		}
		before := got
		for m := range batch.Messages() {
			buf.Write(m.Data())
			digest.Write(m.Data())
			got++
		}
		if err := batch.Error(); err != nil && !errors.Is(err, jetstream.ErrNoMessages) && !errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("read chunks: %w", err)
		}
		if got == before {
			if err := s.stillThere(ctx, obs, bucket, name, info, chunks); err != nil {
				return nil, err
			}
		}
	}
	if buf.Len() != int(info.Size) {
		return nil, fmt.Errorf("%d bytes in its chunks, its info says %d: %w", buf.Len(), info.Size, ErrCorrupt)
	}
	if !bytes.Equal(digest.Sum(nil), want) {
		return nil, fmt.Errorf("%v: %w", jetstream.ErrDigestMismatch, ErrCorrupt)
	}
	return buf.Bytes(), nil
}

// stillThere says why no chunk came for a while: the object was deleted or
// replaced (ErrNotFound), its chunks are gone (ErrCorrupt), or nothing is
// wrong (nil: the server is slow).
func (s *JetStream) stillThere(ctx context.Context, obs jetstream.ObjectStore, bucket, name string, info *jetstream.ObjectInfo, chunks string) error {
	now, err := obs.GetInfo(ctx, name)
	switch {
	case errors.Is(err, jetstream.ErrObjectNotFound):
		return fmt.Errorf("deleted while it was read: %w", ErrNotFound)
	case err != nil:
		return fmt.Errorf("read chunks: %w", err)
	case now.NUID != info.NUID:
		return fmt.Errorf("replaced while it was read: %w", ErrNotFound)
	}
	stream, err := s.js.Stream(ctx, "OBJ_"+bucket)
	if err != nil {
		return fmt.Errorf("read chunks: %w", err)
	}
	if _, err := stream.GetLastMsgForSubject(ctx, chunks); errors.Is(err, jetstream.ErrMsgNotFound) {
		return fmt.Errorf("its %d chunks are not in the bucket: %w", info.Chunks, ErrCorrupt)
	} else if err != nil {
		return fmt.Errorf("read chunks: %w", err)
	}
	return nil
}
