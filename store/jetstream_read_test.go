package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// jsObject puts a 1 MiB blob (8 chunks) of job "j" checkpoint 1 into a
// fresh store and returns the store, its bucket and the object's info.
func jsObject(t *testing.T) (*JetStream, jetstream.ObjectStore, *jetstream.ObjectInfo, []byte) {
	t.Helper()
	js := startJetStream(t)
	s, err := NewJetStream(js, WithStorage(jetstream.MemoryStorage))
	if err != nil {
		t.Fatal(err)
	}
	s.idle = 100 * time.Millisecond // the idle pull the tests wait for
	data := bytes.Repeat([]byte("0123456789abcdef"), 1<<16)
	if _, err := s.PutBlob(testCtx(t), "j", 1, "b", data); err != nil {
		t.Fatal(err)
	}
	obs, err := js.ObjectStore(testCtx(t), bucketName(s.cfg.prefix, "j"))
	if err != nil {
		t.Fatal(err)
	}
	info, err := obs.GetInfo(testCtx(t), objectName(1, "b"))
	if err != nil {
		t.Fatal(err)
	}
	if info.Chunks < 2 {
		t.Fatalf("the object has %d chunks: the test needs several", info.Chunks)
	}
	return s, obs, info, data
}

// TestJetStreamReadOfAnObjectDeletedUnderIt: the object is deleted after
// its info was read, before its chunks (a retire deleting the manifest
// another reader has just found). The read ends with ErrNotFound after an
// idle pull, not at its context's deadline: ObjectStore.Get waits for the
// purged chunks until then (here 60 s).
func TestJetStreamReadOfAnObjectDeletedUnderIt(t *testing.T) {
	s, obs, info, _ := jsObject(t)
	if err := obs.Delete(testCtx(t), info.Name); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := time.Now()
	_, err := s.readChunks(ctx, obs, bucketName(s.cfg.prefix, "j"), info.Name, info)
	if !errors.Is(err, ErrNotFound) {
		t.Fatalf("read of a deleted object: %v, want ErrNotFound", err)
	}
	if ctx.Err() != nil {
		t.Fatalf("the read ended at its deadline (%v): %v", time.Since(start), err)
	}
	t.Logf("ended after %v: %v", time.Since(start).Round(time.Millisecond), err)
}

// TestJetStreamReadOfAnObjectWithoutChunks: the object's info is there but
// its chunks were purged (by hand, or a delete cut short): the read wraps
// ErrCorrupt, so the checkpoint counts as damaged, before its deadline.
func TestJetStreamReadOfAnObjectWithoutChunks(t *testing.T) {
	s, _, info, _ := jsObject(t)
	stream, err := s.js.Stream(testCtx(t), "OBJ_"+bucketName(s.cfg.prefix, "j"))
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Purge(testCtx(t), jetstream.WithPurgeSubject(fmt.Sprintf("$O.%s.C.%s", bucketName(s.cfg.prefix, "j"), info.NUID))); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err = s.GetBlob(ctx, "j", 1, BlobRef{Name: "b", Size: int64(info.Size)})
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("read of an object without chunks: %v, want ErrCorrupt", err)
	}
	if ctx.Err() != nil {
		t.Fatalf("the read ended at its deadline: %v", err)
	}
}

// TestJetStreamReadsManyChunks: an object of more chunks than one pull
// asks for reads back whole, and a damaged chunk is found by the digest.
func TestJetStreamReadsManyChunks(t *testing.T) {
	s, obs, info, data := jsObject(t)
	if info.Chunks > objectBatch {
		t.Fatalf("the test object has %d chunks, more than a pull", info.Chunks)
	}
	big := bytes.Repeat(data, 2*objectBatch/int(info.Chunks)+1) // more than two pulls
	if _, err := s.PutBlob(testCtx(t), "j", 2, "big", big); err != nil {
		t.Fatal(err)
	}
	got, err := s.getObject(testCtx(t), obs, "j", objectName(2, "big"))
	if err != nil || !bytes.Equal(got, big) {
		t.Fatalf("read %d bytes of %d, %v", len(got), len(big), err)
	}
	stream, err := s.js.Stream(testCtx(t), "OBJ_"+bucketName(s.cfg.prefix, "j"))
	if err != nil {
		t.Fatal(err)
	}
	// Replace the object's last chunk with other bytes of the same size.
	chunks := fmt.Sprintf("$O.%s.C.%s", bucketName(s.cfg.prefix, "j"), info.NUID)
	last, err := stream.GetLastMsgForSubject(testCtx(t), chunks)
	if err != nil {
		t.Fatal(err)
	}
	flipped := append([]byte(nil), last.Data...)
	flipped[0] ^= 1
	if err := stream.DeleteMsg(testCtx(t), last.Sequence); err != nil {
		t.Fatal(err)
	}
	if _, err := s.js.Publish(testCtx(t), chunks, flipped); err != nil {
		t.Fatal(err)
	}
	if _, err := s.getObject(testCtx(t), obs, "j", info.Name); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("read of an object with a changed chunk: %v, want ErrCorrupt", err)
	}
}
