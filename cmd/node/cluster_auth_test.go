package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestClusterRequiresCredentials: a cluster whose embedded NATS server
// requires a user and password runs a job for clients that log in, while a
// client without credentials can neither read (inspect, status) nor submit.
// A detached unbounded job is then cancelled.
func TestClusterRequiresCredentials(t *testing.T) {
	t.Parallel()
	bin := buildNode(t)
	auth := []string{"--nats-user", "weir", "--nats-password", "s3cret"}
	c := startCluster(t, bin, []string{"n1", "n2"}, []string{"--embed-user", "weir", "--embed-password", "s3cret"}, auth)

	for _, args := range [][]string{
		{"status", "--json"},
		{"inspect", "--for", "1s"},
		{"submit", "keycount", "--records", "1000", "--detach"},
	} {
		cmd := exec.Command(bin, append(args, "--nats", c.url)...)
		out, err := cmd.CombinedOutput()
		if err == nil {
			t.Fatalf("%s without credentials succeeded:\n%s", strings.Join(args, " "), out)
		}
		if !strings.Contains(strings.ToLower(string(out)), "authorization") {
			t.Fatalf("%s without credentials: the error does not say why:\n%s", strings.Join(args, " "), out)
		}
	}
	wrong := exec.Command(bin, "status", "--nats", c.url, "--nats-user", "weir", "--nats-password", "wrong")
	if out, err := wrong.CombinedOutput(); err == nil || strings.Contains(string(out), "wrong") {
		t.Fatalf("status with a wrong password: err %v, output (must not echo the password):\n%s", err, out)
	}

	out := c.dir + "/out.jsonl"
	const n, k = 50000, 10
	if code, stdout, stderr := c.client(append([]string{"submit"}, keycountArgs(out, n, k)...)...); code != 0 {
		t.Fatalf("submit with credentials: exit %d\n%s\n%s", code, stdout, stderr)
	}
	verifyKeycount(t, out, n, k)

	// An unbounded job, detached, then cancelled: it stops and ends as
	// cancelled.
	if code, stdout, stderr := c.client("submit", "keycount", "--records", "-1", "--detach"); code != 0 || !strings.Contains(stdout, "submitted") {
		t.Fatalf("submit --detach: exit %d\n%s\n%s", code, stdout, stderr)
	}
	c.waitCheckpoint("keycount", 1, "")
	if code, stdout, stderr := c.client("cancel", "keycount"); code != 0 {
		t.Fatalf("cancel: exit %d\n%s\n%s", code, stdout, stderr)
	}
	c.waitStatus("the job cancelled", func(s statusView) bool {
		for _, j := range s.Jobs {
			if j.Name == "keycount" {
				return j.State == "cancelled"
			}
		}
		return false
	})
}
