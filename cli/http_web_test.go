package cli

import (
	"net"
	"strings"
	"testing"
)

func TestHTTPFlagRejectsABadOrBusyAddress(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "keycount", "--records", "10", "--http", "nonsense"}, "--http nonsense: listen tcp: address nonsense: missing port"},
		{[]string{"run", "keycount", "--records", "10", "--http", busy.Addr().String()}, "--http " + busy.Addr().String() + ": listen tcp"},
	} {
		r := runMain(t, tc.args...)
		if msg := lastLine(r.stderr); r.code != ExitUsage || !strings.Contains(msg, tc.want) {
			t.Fatalf("%v: exit %d, message %q; want %d and %q", tc.args, r.code, msg, ExitUsage, tc.want)
		}
	}
}
