package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// JetStream is a Store in NATS JetStream object stores: one bucket per job
// (see BucketName), objects "chk-<id>/<blob name>" and "chk-<id>/_manifest".
// Blobs are verified with the store's own size and CRC32C from the BlobRef,
// in addition to JetStream's SHA-256 digest. JetStream publishes an object's
// metadata only after all of its chunks, so a failed Put never exposes a
// partial object.
type JetStream struct {
	js     jetstream.JetStream
	cfg    jsConfig
	mu     sync.Mutex
	bucket map[string]jetstream.ObjectStore // job → bound bucket
	closed atomic.Bool
	idle   time.Duration // objectIdle; shorter in tests
}

var _ Store = (*JetStream)(nil)

type jsConfig struct {
	prefix   string
	replicas int
	storage  jetstream.StorageType
}

// JetStreamOption configures a JetStream store.
type JetStreamOption func(*jsConfig)

// WithReplicas sets the number of replicas of buckets the store creates
// (default 1).
func WithReplicas(n int) JetStreamOption {
	return func(c *jsConfig) { c.replicas = n }
}

// WithStorage sets the storage type of buckets the store creates (default
// jetstream.FileStorage).
func WithStorage(st jetstream.StorageType) JetStreamOption {
	return func(c *jsConfig) { c.storage = st }
}

// WithBucketPrefix replaces the "weir-" prefix of bucket names (for tests or
// several weir installations sharing one NATS account).
func WithBucketPrefix(prefix string) JetStreamOption {
	return func(c *jsConfig) { c.prefix = prefix }
}

// NewJetStream returns a Store in the object stores of js. The store does
// not own the NATS connection: Close does not close it.
func NewJetStream(js jetstream.JetStream, opts ...JetStreamOption) (*JetStream, error) {
	if js == nil {
		return nil, errors.New("open jetstream store: nil jetstream context")
	}
	cfg := jsConfig{prefix: "weir-", replicas: 1, storage: jetstream.FileStorage}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.prefix != "" && sanitizeBucket(cfg.prefix) != cfg.prefix {
		return nil, fmt.Errorf("open jetstream store: bucket prefix %q: only letters, digits, '-' and '_' allowed: %w", cfg.prefix, ErrInvalidName)
	}
	return &JetStream{js: js, cfg: cfg, bucket: make(map[string]jetstream.ObjectStore), idle: objectIdle}, nil
}

// BucketName returns the object-store bucket that holds the checkpoints of
// job under the default prefix: "weir-<job>", with characters JetStream does
// not allow replaced by '_' and, if anything was replaced or cut, a hash of
// the job name appended so different jobs never share a bucket.
func BucketName(job string) string { return bucketName("weir-", job) }

const maxBucketJobLen = 128

func bucketName(prefix, job string) string {
	clean := sanitizeBucket(job)
	if clean == job && len(job) <= maxBucketJobLen {
		return prefix + job
	}
	if len(clean) > maxBucketJobLen {
		clean = clean[:maxBucketJobLen]
	}
	return fmt.Sprintf("%s%s-%08x", prefix, clean, Checksum([]byte(job)))
}

// sanitizeBucket replaces every byte JetStream does not allow in a bucket
// name with '_'.
func sanitizeBucket(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '-' || c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
			b.WriteByte(c)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// objectName is the object of blob name (or the manifest) in checkpoint ckpt.
func objectName(ckpt uint64, name string) string {
	return checkpointDir(ckpt) + "/" + name
}

func (s *JetStream) check(ctx context.Context) error {
	if s.closed.Load() {
		return ErrClosed
	}
	return ctx.Err()
}

// objectStore binds (and with create, creates) the bucket of job. Without
// create a missing bucket wraps ErrNotFound.
func (s *JetStream) objectStore(ctx context.Context, job string, create bool) (jetstream.ObjectStore, error) {
	s.mu.Lock()
	obs, ok := s.bucket[job]
	s.mu.Unlock()
	if ok {
		return obs, nil
	}
	name := bucketName(s.cfg.prefix, job)
	obs, err := s.js.ObjectStore(ctx, name)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		if !create {
			return nil, fmt.Errorf("bucket %s: %w", name, ErrNotFound)
		}
		obs, err = s.js.CreateObjectStore(ctx, jetstream.ObjectStoreConfig{
			Bucket:      name,
			Description: fmt.Sprintf("weir checkpoints of job %s", job),
			Storage:     s.cfg.storage,
			Replicas:    s.cfg.replicas,
		})
		if errors.Is(err, jetstream.ErrBucketExists) {
			obs, err = s.js.ObjectStore(ctx, name)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("bucket %s: %w", name, err)
	}
	s.mu.Lock()
	if cached, ok := s.bucket[job]; ok {
		obs = cached
	} else {
		s.bucket[job] = obs
	}
	s.mu.Unlock()
	return obs, nil
}

// PutBlob implements Store.
func (s *JetStream) PutBlob(ctx context.Context, job string, ckpt uint64, name string, data []byte) (BlobRef, error) {
	obs, err := s.blobTarget(ctx, job, ckpt, name)
	if err != nil {
		return BlobRef{}, err
	}
	if _, err := obs.PutBytes(ctx, objectName(ckpt, name), data); err != nil {
		return BlobRef{}, putBlobErr(job, ckpt, name, fmt.Errorf("put object %s: %w", objectName(ckpt, name), err))
	}
	return blobRefFor(ctx, name, data), nil
}

// PutBlobStream implements BlobStreamer: what write writes is published in
// the object's chunks as it comes, through a pipe; a failed write, or a
// failed publish, purges the chunks already published, and the object is
// never visible.
func (s *JetStream) PutBlobStream(ctx context.Context, job string, ckpt uint64, name string, write func(w io.Writer) error) (BlobRef, error) {
	obs, err := s.blobTarget(ctx, job, ckpt, name)
	if err != nil {
		return BlobRef{}, err
	}
	pr, pw := io.Pipe()
	tally := newBlobTally(ctx, pw)
	produced := make(chan error, 1)
	go func() {
		err := write(tally)
		pw.CloseWithError(err) // nil: the object ends here
		produced <- err
	}()
	_, putErr := obs.Put(ctx, jetstream.ObjectMeta{Name: objectName(ckpt, name)}, pr)
	pr.CloseWithError(errObjectPutEnded) // the producer's later writes fail instead of blocking
	writeErr := <-produced
	if putErr != nil { // a failed write fails the put with the write's error
		return BlobRef{}, putBlobErr(job, ckpt, name, fmt.Errorf("put object %s: %w", objectName(ckpt, name), putErr))
	}
	if writeErr != nil {
		return BlobRef{}, putBlobErr(job, ckpt, name, fmt.Errorf("write object %s: %w", objectName(ckpt, name), writeErr))
	}
	return tally.ref(name), nil
}

// errObjectPutEnded is what a streamed blob's producer gets from a write
// after the object's Put returned (it failed).
var errObjectPutEnded = errors.New("object put ended")

// blobTarget checks a blob's names and returns the object store it goes
// in, creating the job's bucket if need be.
func (s *JetStream) blobTarget(ctx context.Context, job string, ckpt uint64, name string) (jetstream.ObjectStore, error) {
	if err := s.check(ctx); err != nil {
		return nil, putBlobErr(job, ckpt, name, err)
	}
	if err := ValidateJob(job); err != nil {
		return nil, putBlobErr(job, ckpt, name, err)
	}
	if err := ValidateBlobName(name); err != nil {
		return nil, putBlobErr(job, ckpt, name, err)
	}
	obs, err := s.objectStore(ctx, job, true)
	if err != nil {
		return nil, putBlobErr(job, ckpt, name, err)
	}
	return obs, nil
}

// putBlobErr wraps err of storing blob name of a job's checkpoint.
func putBlobErr(job string, ckpt uint64, name string, err error) error {
	return fmt.Errorf("put blob %q of job %q checkpoint %d: %w", name, job, ckpt, err)
}

// GetBlob implements Store.
func (s *JetStream) GetBlob(ctx context.Context, job string, ckpt uint64, ref BlobRef) ([]byte, error) {
	return getBlob(job, ckpt, ref, func(name string) ([]byte, error) { return s.readObject(ctx, job, ckpt, name) })
}

// GetSections implements SectionReader: each object is fetched once.
func (s *JetStream) GetSections(ctx context.Context, job string, ckpt uint64, refs []BlobRef) ([][]byte, error) {
	return sectionsOf(job, ckpt, refs, func(name string) ([]byte, error) { return s.readObject(ctx, job, ckpt, name) })
}

// readObject fetches blob name of a checkpoint, unverified.
func (s *JetStream) readObject(ctx context.Context, job string, ckpt uint64, name string) ([]byte, error) {
	if err := s.check(ctx); err != nil {
		return nil, err
	}
	if err := ValidateJob(job); err != nil {
		return nil, err
	}
	if err := ValidateBlobName(name); err != nil {
		return nil, err
	}
	obs, err := s.objectStore(ctx, job, false)
	if err != nil {
		return nil, err
	}
	return s.getObject(ctx, obs, job, objectName(ckpt, name))
}

// CommitManifest implements Store.
func (s *JetStream) CommitManifest(ctx context.Context, m *Manifest) error {
	if err := validateManifest(m); err != nil {
		return err
	}
	wrap := func(err error) error {
		return fmt.Errorf("commit manifest of job %q checkpoint %d: %w", m.Job, m.CheckpointID, err)
	}
	if err := s.check(ctx); err != nil {
		return wrap(err)
	}
	data, err := EncodeManifest(m)
	if err != nil {
		return wrap(err)
	}
	obs, err := s.objectStore(ctx, m.Job, true)
	if err != nil {
		return wrap(err)
	}
	name := objectName(m.CheckpointID, manifestName)
	old, err := s.getObject(ctx, obs, m.Job, name)
	switch {
	case err == nil:
		same, conflict := compareCommitted(m.Job, m.CheckpointID, old, data)
		if same {
			return nil
		}
		if conflict {
			return wrap(fmt.Errorf("a different manifest is committed: %w", ErrExists))
		}
		// A corrupt manifest means the checkpoint does not exist; replace it.
	case errors.Is(err, ErrNotFound), errors.Is(err, ErrCorrupt):
	default:
		return wrap(err)
	}
	if _, err := obs.PutBytes(ctx, name, data); err != nil {
		return wrap(fmt.Errorf("put object %s: %w", name, err))
	}
	return nil
}

// Manifest implements Store.
func (s *JetStream) Manifest(ctx context.Context, job string, ckpt uint64) (*Manifest, error) {
	if err := s.check(ctx); err != nil {
		return nil, fmt.Errorf("manifest of job %q checkpoint %d: %w", job, ckpt, err)
	}
	if err := ValidateJob(job); err != nil {
		return nil, fmt.Errorf("manifest of checkpoint %d: %w", ckpt, err)
	}
	obs, err := s.objectStore(ctx, job, false)
	if err != nil {
		return nil, fmt.Errorf("manifest of job %q checkpoint %d: %w", job, ckpt, err)
	}
	return s.readManifest(ctx, obs, job, ckpt)
}

// readManifest reads and decodes the manifest of checkpoint ckpt of job.
func (s *JetStream) readManifest(ctx context.Context, obs jetstream.ObjectStore, job string, ckpt uint64) (*Manifest, error) {
	data, err := s.getObject(ctx, obs, job, objectName(ckpt, manifestName))
	if err != nil {
		return nil, fmt.Errorf("manifest of job %q checkpoint %d: %w", job, ckpt, err)
	}
	return decodeManifestFor(job, ckpt, data)
}

// objects lists the live objects of a bucket (empty for an empty bucket).
func objects(ctx context.Context, obs jetstream.ObjectStore) ([]*jetstream.ObjectInfo, error) {
	infos, err := obs.List(ctx)
	if errors.Is(err, jetstream.ErrNoObjectsFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list objects: %w", err)
	}
	return infos, nil
}

// checkpointOf returns the checkpoint an object name belongs to.
func checkpointOf(object string) (uint64, bool) {
	dir, _, found := strings.Cut(object, "/")
	if !found {
		return 0, false
	}
	return parseCheckpointDir(dir)
}

// prepareJob binds the bucket of job (nil if it does not exist) and lists the
// checkpoints that have any object.
func (s *JetStream) prepareJob(ctx context.Context, op, job string) ([]uint64, readManifestFunc, error) {
	if err := s.check(ctx); err != nil {
		return nil, nil, fmt.Errorf("%s of job %q: %w", op, job, err)
	}
	if err := ValidateJob(job); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", op, err)
	}
	obs, err := s.objectStore(ctx, job, false)
	if errors.Is(err, ErrNotFound) {
		return nil, func(context.Context, uint64) (*Manifest, error) { return nil, ErrNotFound }, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("%s of job %q: %w", op, job, err)
	}
	infos, err := objects(ctx, obs)
	if err != nil {
		return nil, nil, fmt.Errorf("%s of job %q: %w", op, job, err)
	}
	var ids []uint64
	for _, info := range infos {
		if id, ok := checkpointOf(info.Name); ok && !info.Deleted {
			ids = append(ids, id)
		}
	}
	read := func(ctx context.Context, ckpt uint64) (*Manifest, error) {
		if err := s.check(ctx); err != nil {
			return nil, err
		}
		return s.readManifest(ctx, obs, job, ckpt)
	}
	return ids, read, nil
}

// Latest implements Store.
func (s *JetStream) Latest(ctx context.Context, job string) (*Manifest, error) {
	ids, read, err := s.prepareJob(ctx, "latest checkpoint", job)
	if err != nil {
		return nil, err
	}
	return latestValid(ctx, job, ids, read)
}

// List implements Store.
func (s *JetStream) List(ctx context.Context, job string) ([]uint64, error) {
	ids, read, err := s.prepareJob(ctx, "list checkpoints", job)
	if err != nil {
		return nil, err
	}
	return listValid(ctx, job, ids, read)
}

// Uncommitted lists the checkpoints of job that have stored objects but no
// manifest that verifies, ascending: candidates for Delete.
func (s *JetStream) Uncommitted(ctx context.Context, job string) ([]uint64, error) {
	ids, read, err := s.prepareJob(ctx, "uncommitted checkpoints", job)
	if err != nil {
		return nil, err
	}
	return uncommitted(ctx, job, ids, read)
}

// Delete implements Store.
func (s *JetStream) Delete(ctx context.Context, job string, ckpt uint64) error {
	wrap := func(err error) error {
		return fmt.Errorf("delete checkpoint %d of job %q: %w", ckpt, job, err)
	}
	if err := s.check(ctx); err != nil {
		return wrap(err)
	}
	if err := ValidateJob(job); err != nil {
		return wrap(err)
	}
	obs, err := s.objectStore(ctx, job, false)
	if err != nil {
		return wrap(err)
	}
	deleted := 0
	manifest := objectName(ckpt, manifestName)
	// GetInfo hides deleted objects; Delete of a deleted one would succeed.
	switch _, err := obs.GetInfo(ctx, manifest); {
	case err == nil:
		if err := obs.Delete(ctx, manifest); err != nil && !errors.Is(err, jetstream.ErrObjectNotFound) {
			return wrap(fmt.Errorf("delete manifest object %s: %w", manifest, err))
		}
		deleted++
	case errors.Is(err, jetstream.ErrObjectNotFound):
	default:
		return wrap(fmt.Errorf("look up manifest object %s: %w", manifest, err))
	}
	infos, err := objects(ctx, obs)
	if err != nil {
		return wrap(err)
	}
	prefix := checkpointDir(ckpt) + "/"
	for _, info := range infos {
		if info.Deleted || !strings.HasPrefix(info.Name, prefix) || info.Name == manifest {
			continue
		}
		if err := obs.Delete(ctx, info.Name); err != nil && !errors.Is(err, jetstream.ErrObjectNotFound) {
			return wrap(fmt.Errorf("delete object %s: %w", info.Name, err))
		}
		deleted++
	}
	if deleted == 0 {
		return wrap(ErrNotFound)
	}
	return nil
}

// Close implements Store; it is idempotent and leaves the NATS connection open.
func (s *JetStream) Close() error {
	s.closed.Store(true)
	return nil
}
