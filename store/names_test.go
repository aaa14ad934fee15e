package store

import (
	"errors"
	"strings"
	"testing"
)

func TestValidateJob(t *testing.T) {
	for _, ok := range []string{"orders", "job-1", "a.b", "Ünïcode", "with space", strings.Repeat("j", 255)} {
		if err := ValidateJob(ok); err != nil {
			t.Errorf("ValidateJob(%q) = %v, want nil", ok, err)
		}
	}
	for _, bad := range badJobs {
		err := ValidateJob(bad)
		if !errors.Is(err, ErrInvalidName) {
			t.Errorf("ValidateJob(%q) = %v, want ErrInvalidName", bad, err)
		}
	}
}

func TestValidateBlobName(t *testing.T) {
	for _, ok := range []string{"op-count/3/kg-17", "flat", "a/b/c", "src/0/offset", "x/_manifest", "a..b/c.d"} {
		if err := ValidateBlobName(ok); err != nil {
			t.Errorf("ValidateBlobName(%q) = %v, want nil", ok, err)
		}
	}
	for _, bad := range badBlobNames {
		err := ValidateBlobName(bad)
		if !errors.Is(err, ErrInvalidName) {
			t.Errorf("ValidateBlobName(%q) = %v, want ErrInvalidName", bad, err)
		}
	}
	if err := ValidateBlobName(strings.Repeat("a/", 600) + "a"); !errors.Is(err, ErrInvalidName) {
		t.Errorf("over-long blob name accepted: %v", err)
	}
}

func TestCheckpointDirRoundTrip(t *testing.T) {
	for _, id := range []uint64{0, 1, 42, 1 << 40, ^uint64(0)} {
		name := checkpointDir(id)
		if len(name) != len(checkpointPrefix)+checkpointDigits {
			t.Fatalf("checkpointDir(%d) = %q: not fixed width", id, name)
		}
		got, ok := parseCheckpointDir(name)
		if !ok || got != id {
			t.Fatalf("parseCheckpointDir(%q) = %d, %v; want %d", name, got, ok, id)
		}
	}
	if checkpointDir(42) != "chk-00000000000000000042" {
		t.Fatalf("checkpointDir(42) = %q", checkpointDir(42))
	}
	for _, bad := range []string{"chk-1", "chk-0000000000000000004x", "chk-99999999999999999999", "ckp-00000000000000000001", "_manifest", ".tmp-1"} {
		if _, ok := parseCheckpointDir(bad); ok {
			t.Errorf("parseCheckpointDir(%q) accepted", bad)
		}
	}
}

func TestBucketName(t *testing.T) {
	cases := map[string]string{
		"orders":  "weir-orders",
		"job_1-x": "weir-job_1-x",
	}
	for job, want := range cases {
		if got := BucketName(job); got != want {
			t.Errorf("BucketName(%q) = %q, want %q", job, got, want)
		}
	}
	// Sanitised names get a hash so distinct jobs never share a bucket.
	seen := map[string]string{}
	for _, job := range []string{"a.b", "a_b", "a b", "a*b", "a>b", strings.Repeat("x", 200), strings.Repeat("x", 201)} {
		b := BucketName(job)
		if sanitizeBucket(b) != b {
			t.Errorf("BucketName(%q) = %q contains characters JetStream rejects", job, b)
		}
		if other, dup := seen[b]; dup {
			t.Errorf("jobs %q and %q share bucket %q", job, other, b)
		}
		seen[b] = job
	}
}
