package cluster

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/vmihailenco/msgpack/v5"
)

// DefaultJobBucket is the KV bucket that holds the submitted jobs.
const DefaultJobBucket = "weir-jobs"

// Job states.
const (
	JobRunning   = "running"
	JobFinished  = "finished"
	JobFailed    = "failed"
	JobCancelled = "cancelled"
)

var (
	// ErrJobNotFound is returned by Get for a job that was never submitted.
	ErrJobNotFound = errors.New("job not found")
	// ErrJobExists is returned by Create when the job name is taken.
	ErrJobExists = errors.New("job already exists")
	// ErrJobChanged is returned by Update when the record was written by
	// someone else since the given revision.
	ErrJobChanged = errors.New("job record changed")
)

// JobRecord is a submitted job as stored in the registry, enough for any
// node to take over its coordination.
type JobRecord struct {
	Name        string   `msgpack:"name" json:"name"`
	Args        []string `msgpack:"args,omitempty" json:"args,omitempty"`
	Submitted   int64    `msgpack:"submitted" json:"submitted_unix_nano"`
	State       string   `msgpack:"state" json:"state"` // JobRunning, JobFinished, JobFailed, JobCancelled
	Error       string   `msgpack:"error,omitempty" json:"error,omitempty"`
	Coordinator string   `msgpack:"coord,omitempty" json:"coordinator,omitempty"`
	// Restarts counts the job's restarts over all its coordinators (region
	// restarts and takeovers), by cause in RestartCauses; its coordinator
	// updates them while it runs and when it ends.
	Restarts      int            `msgpack:"restarts,omitempty" json:"restarts,omitempty"`
	RestartCauses map[string]int `msgpack:"restart_causes,omitempty" json:"restart_causes,omitempty"`
	// Rescales are the job's latest live rescales (job_rescales.go).
	Rescales *RescaleHistory `msgpack:"rescales,omitempty" json:"rescale_history,omitempty"`
	// CancelRequested is set by the coordinator that accepted a cancel,
	// before it stops the job: a node that takes the job over (the
	// coordinator died or lost its lease while stopping) records it
	// cancelled instead of running it again.
	CancelRequested bool `msgpack:"cancel_requested,omitempty" json:"cancel_requested,omitempty"`
}

// check validates a record before it is written or after it is read.
func (r JobRecord) check() error {
	if err := checkKey(r.Name); err != nil {
		return err
	}
	switch r.State {
	case JobRunning, JobFinished, JobFailed, JobCancelled:
		return nil
	}
	return fmt.Errorf("job %s: unknown state %q", r.Name, r.State)
}

// decodeJob decodes and checks the record stored under key.
func decodeJob(key string, b []byte) (JobRecord, error) {
	var r JobRecord
	if err := msgpack.Unmarshal(b, &r); err != nil {
		return JobRecord{}, fmt.Errorf("decode job record %s (%d bytes): %w", key, len(b), err)
	}
	if r.Name != key {
		return JobRecord{}, fmt.Errorf("job record under %q names job %q", key, r.Name)
	}
	if err := r.check(); err != nil {
		return JobRecord{}, fmt.Errorf("bad job record: %w", err)
	}
	return r, nil
}

// Jobs is the registry of submitted jobs in a JetStream KV bucket, keyed by
// job name. It is safe for concurrent use.
type Jobs struct{ kv jetstream.KeyValue }

// OpenJobs opens the job bucket, creating it when missing.
func OpenJobs(ctx context.Context, js jetstream.JetStream, bucket string) (*Jobs, error) {
	kv, err := openKV(ctx, js, jetstream.KeyValueConfig{
		Bucket:      bucket,
		Description: "weir: submitted jobs",
		History:     4,
	})
	if err != nil {
		return nil, err
	}
	return &Jobs{kv: kv}, nil
}

// encode checks and encodes r.
func (j *Jobs) encode(r JobRecord) ([]byte, error) {
	if err := r.check(); err != nil {
		return nil, err
	}
	b, err := msgpack.Marshal(&r)
	if err != nil {
		return nil, fmt.Errorf("encode job %s: %w", r.Name, err)
	}
	return b, nil
}

// Create stores a newly submitted job; ErrJobExists when the name is taken.
// It returns the record's revision.
func (j *Jobs) Create(ctx context.Context, r JobRecord) (uint64, error) {
	b, err := j.encode(r)
	if err != nil {
		return 0, err
	}
	rev, err := j.kv.Create(ctx, r.Name, b)
	if errors.Is(err, jetstream.ErrKeyExists) {
		return 0, fmt.Errorf("create job %s: %w", r.Name, ErrJobExists)
	}
	if err != nil {
		return 0, fmt.Errorf("create job %s: %w", r.Name, err)
	}
	return rev, nil
}

// Put stores r unconditionally and returns its revision.
func (j *Jobs) Put(ctx context.Context, r JobRecord) (uint64, error) {
	b, err := j.encode(r)
	if err != nil {
		return 0, err
	}
	rev, err := j.kv.Put(ctx, r.Name, b)
	if err != nil {
		return 0, fmt.Errorf("put job %s: %w", r.Name, err)
	}
	return rev, nil
}

// Update stores r only if the record is still at revision rev (as returned
// by Get, Create, Put or Update); ErrJobChanged otherwise.
func (j *Jobs) Update(ctx context.Context, r JobRecord, rev uint64) (uint64, error) {
	b, err := j.encode(r)
	if err != nil {
		return 0, err
	}
	newRev, err := j.kv.Update(ctx, r.Name, b, rev)
	if errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
		return 0, fmt.Errorf("update job %s at revision %d: %w", r.Name, rev, ErrJobChanged)
	}
	if err != nil {
		return 0, fmt.Errorf("update job %s: %w", r.Name, err)
	}
	return newRev, nil
}

// Get returns the record of job and its revision; ErrJobNotFound when there
// is none.
func (j *Jobs) Get(ctx context.Context, name string) (JobRecord, uint64, error) {
	if err := checkKey(name); err != nil {
		return JobRecord{}, 0, err
	}
	e, err := j.kv.Get(ctx, name)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return JobRecord{}, 0, fmt.Errorf("job %s: %w", name, ErrJobNotFound)
	}
	if err != nil {
		return JobRecord{}, 0, fmt.Errorf("get job %s: %w", name, err)
	}
	r, err := decodeJob(name, e.Value())
	if err != nil {
		return JobRecord{}, 0, err
	}
	return r, e.Revision(), nil
}

// Delete removes the record of job; deleting a missing job is not an error.
func (j *Jobs) Delete(ctx context.Context, name string) error {
	if err := checkKey(name); err != nil {
		return err
	}
	if err := j.kv.Delete(ctx, name); err != nil {
		return fmt.Errorf("delete job %s: %w", name, err)
	}
	return nil
}

// List returns every job record sorted by name. Records that do not decode
// are left out and reported in the error, which comes with the good records.
func (j *Jobs) List(ctx context.Context) ([]JobRecord, error) {
	w, err := j.kv.WatchAll(ctx, jetstream.IgnoreDeletes())
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	defer func() { _ = w.Stop() }()
	var (
		out  []JobRecord
		errs []error
	)
	for {
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("list jobs: %w", ctx.Err())
		case e, ok := <-w.Updates():
			if !ok {
				return nil, errors.New("list jobs: watcher closed")
			}
			if e == nil { // all current values delivered
				sort.Slice(out, func(a, b int) bool { return out[a].Name < out[b].Name })
				return out, errors.Join(errs...)
			}
			r, err := decodeJob(e.Key(), e.Value())
			if err != nil {
				errs = append(errs, err)
				continue
			}
			out = append(out, r)
		}
	}
}

// Watch sends every current job record and then every change, in order, on
// the returned channel until ctx is done; then the channel is closed.
// Deletions are not sent. Records that do not decode go to bad (when not
// nil) and are skipped. The watching goroutine is owned by ctx.
func (j *Jobs) Watch(ctx context.Context, bad func(key string, err error)) (<-chan JobRecord, error) {
	w, err := j.kv.WatchAll(ctx, jetstream.IgnoreDeletes())
	if err != nil {
		return nil, fmt.Errorf("watch jobs: %w", err)
	}
	out := make(chan JobRecord)
	go func() {
		defer close(out)
		defer func() { _ = w.Stop() }()
		for {
			var e jetstream.KeyValueEntry
			select {
			case <-ctx.Done():
				return
			case v, ok := <-w.Updates():
				if !ok {
					return
				}
				e = v
			}
			if e == nil {
				continue // end of the initial values
			}
			r, err := decodeJob(e.Key(), e.Value())
			if err != nil {
				if bad != nil {
					bad(e.Key(), err)
				}
				continue
			}
			select {
			case out <- r:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, nil
}
