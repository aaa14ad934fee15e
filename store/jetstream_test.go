package store

import (
	"context"
	"strconv"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/weirstream/weir/internal/natstest"
)

func jsHarness(t *testing.T) harness {
	js := natstest.Start(t, natstest.Options{JetStream: true}).JetStream(t)
	prefixes := 0
	bucket := func(t *testing.T, s Store, job string) jetstream.ObjectStore {
		obs, err := js.ObjectStore(testCtx(t), bucketName(s.(*JetStream).cfg.prefix, job))
		if err != nil {
			t.Fatalf("bind bucket of %q: %v", job, err)
		}
		return obs
	}
	return harness{
		// One server for the whole suite; a fresh bucket prefix per store
		// keeps the subtests apart.
		open: func(t *testing.T) Store {
			prefixes++
			s, err := NewJetStream(js, WithStorage(jetstream.MemoryStorage),
				WithBucketPrefix("t"+strconv.Itoa(prefixes)+"-"))
			if err != nil {
				t.Fatalf("NewJetStream: %v", err)
			}
			return s
		},
		rawRead: func(t *testing.T, s Store, job string, ckpt uint64, name string) []byte {
			data, err := bucket(t, s, job).GetBytes(testCtx(t), objectName(ckpt, name))
			if err != nil {
				t.Fatalf("raw read: %v", err)
			}
			return data
		},
		rawWrite: func(t *testing.T, s Store, job string, ckpt uint64, name string, data []byte) {
			if _, err := bucket(t, s, job).PutBytes(testCtx(t), objectName(ckpt, name), data); err != nil {
				t.Fatalf("raw write: %v", err)
			}
		},
	}
}

func TestJetStreamConformance(t *testing.T) {
	runConformance(t, jsHarness(t))
}

func TestJetStreamBucketPerJob(t *testing.T) {
	js := natstest.Start(t, natstest.Options{JetStream: true}).JetStream(t)
	s, err := NewJetStream(js)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	commit(t, s, "orders", 1)
	commit(t, s, "a.b", 1)
	ctx := context.Background()
	for _, name := range []string{"weir-orders", BucketName("a.b")} {
		obs, err := js.ObjectStore(ctx, name)
		if err != nil {
			t.Fatalf("bucket %s: %v", name, err)
		}
		if _, err := obs.GetInfo(ctx, "chk-00000000000000000001/_manifest"); err != nil {
			t.Fatalf("manifest object in %s: %v", name, err)
		}
		if _, err := obs.GetInfo(ctx, "chk-00000000000000000001/count/0/kg-1"); err != nil {
			t.Fatalf("blob object in %s: %v", name, err)
		}
	}
	// A second store on the same server sees the same checkpoints.
	s2, err := NewJetStream(js)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	wantList(t, s2, "orders", []uint64{1})
}

func TestNewJetStreamRejectsBadPrefix(t *testing.T) {
	js := natstest.Start(t, natstest.Options{JetStream: true}).JetStream(t)
	if _, err := NewJetStream(js, WithBucketPrefix("bad.prefix")); err == nil {
		t.Fatal("NewJetStream accepted a prefix with '.'")
	}
	if _, err := NewJetStream(nil); err == nil {
		t.Fatal("NewJetStream accepted a nil context")
	}
}
