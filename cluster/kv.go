package cluster

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
)

// openKV opens the bucket, creating it with cfg when it does not exist.
// Concurrent creators are fine: creating a bucket that exists with the same
// configuration succeeds.
func openKV(ctx context.Context, js jetstream.JetStream, cfg jetstream.KeyValueConfig) (jetstream.KeyValue, error) {
	kv, err := js.KeyValue(ctx, cfg.Bucket)
	if err == nil {
		return kv, nil
	}
	if !errors.Is(err, jetstream.ErrBucketNotFound) {
		return nil, fmt.Errorf("open KV bucket %s: %w", cfg.Bucket, err)
	}
	kv, err = js.CreateKeyValue(ctx, cfg)
	if errors.Is(err, jetstream.ErrBucketExists) {
		kv, err = js.KeyValue(ctx, cfg.Bucket) // created by someone else meanwhile
	}
	if err != nil {
		return nil, fmt.Errorf("create KV bucket %s: %w", cfg.Bucket, err)
	}
	return kv, nil
}

// checkKey reports why a job name cannot be a KV key.
func checkKey(name string) error {
	if name == "" {
		return errors.New("job name is empty")
	}
	if name[0] == '.' || name[len(name)-1] == '.' {
		return fmt.Errorf("job name %q must not start or end with '.'", name)
	}
	for _, c := range name {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '-' || c == '_' || c == '=' || c == '/' || c == '.':
		default:
			return fmt.Errorf("job name %q: use only letters, digits and - _ = / .", name)
		}
	}
	return nil
}
