package cli

import (
	"strings"
	"testing"

	"github.com/weirstream/weir/internal/natstest"
)

// TestClientsWithoutNodes: against a NATS server with no weir node, the
// cluster commands fail with a message that says what is missing.
func TestClientsWithoutNodes(t *testing.T) {
	url := natstest.Start(t, natstest.Options{JetStream: true}).URL
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"submit", "keycount", "--records", "10", "--nats", url}, "no node answered"},
		{[]string{"cancel", "keycount", "--nats", url}, `unknown job "keycount"`},
		{[]string{"status", "--nats", "nats://127.0.0.1:1"}, "no servers available"},
	} {
		r := runMain(t, tc.args...)
		if r.code != ExitFailure || !strings.Contains(lastLine(r.stderr), tc.want) {
			t.Fatalf("%v: exit %d, stderr %q; want exit %d mentioning %q", tc.args, r.code, r.stderr, ExitFailure, tc.want)
		}
	}
	r := runMain(t, "status", "--json", "--wait", "100ms", "--nats", url)
	if r.code != ExitOK || !strings.Contains(r.stdout, `"nodes":null`) {
		t.Fatalf("status of an empty cluster: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}
