package cluster

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/weirstream/weir/internal/leaktest"
)

func TestEmbeddedFreePortAndShutdown(t *testing.T) {
	for _, hp := range []string{"127.0.0.1:0", "127.0.0.1:-1", "0.0.0.0:0"} {
		t.Run(hp, func(t *testing.T) {
			e := startServer(t, EmbedOptions{HostPort: hp})
			u := e.ClientURL()
			if !strings.HasPrefix(u, "nats://127.0.0.1:") || strings.HasSuffix(u, ":0") || strings.HasSuffix(u, ":-1") {
				t.Fatalf("ClientURL = %s, want nats://127.0.0.1:<free port>", u)
			}
			nc := connect(t, ConnOptions{URL: u})
			js, err := jetstream.New(nc)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := js.AccountInfo(testCtx(t)); err != nil {
				t.Fatalf("JetStream not available: %v", err)
			}
			var wg sync.WaitGroup
			for range 3 {
				wg.Go(e.Shutdown)
			}
			wg.Wait()
			e.Shutdown()
			if e.Server().Running() {
				t.Fatal("server still running after Shutdown")
			}
		})
	}
}

func TestEmbeddedBadOptions(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		o    EmbedOptions
		want string
	}{
		{"no store", EmbedOptions{HostPort: "127.0.0.1:-1"}, "store directory"},
		{"bad address", EmbedOptions{HostPort: "localhost", StoreDir: dir}, "address"},
		{"bad port", EmbedOptions{HostPort: "127.0.0.1:x", StoreDir: dir}, "bad port"},
		{"user without password", EmbedOptions{StoreDir: dir, User: "u"}, "without password"},
		{"user and token", EmbedOptions{StoreDir: dir, User: "u", Password: "p", Token: "t"}, "alternatives"},
		{"cert without key", EmbedOptions{StoreDir: dir, TLSCert: "c.pem"}, "certificate and a key"},
		{"missing cert files", EmbedOptions{StoreDir: dir, TLSCert: "nope.pem", TLSKey: "nope.pem"}, "TLS"},
		{"missing config", EmbedOptions{StoreDir: dir, ConfigFile: filepath.Join(dir, "nope.conf")}, "nope.conf"},
		{"bad monitor address", EmbedOptions{StoreDir: dir, MonitorHostPort: "127.0.0.1"}, "monitor"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			leaktest.Check(t) // a server that fails to start leaves nothing running
			e, err := StartEmbedded(tc.o, testLog(t))
			if err == nil {
				e.Shutdown()
				t.Fatal("started, want error")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want containing %q", err, tc.want)
			}
		})
	}
}

// TestEmbeddedMonitor: MonitorHostPort serves NATS's own statistics, and
// /varz counts the bytes a client publishes.
func TestEmbeddedMonitor(t *testing.T) {
	e := startServer(t, EmbedOptions{HostPort: "127.0.0.1:-1", MonitorHostPort: "127.0.0.1:0"})
	addr := e.Server().MonitorAddr()
	if addr == nil {
		t.Fatal("no monitoring address")
	}
	varz := func() (v struct {
		InBytes int64 `json:"in_bytes"`
		InMsgs  int64 `json:"in_msgs"`
	}) {
		t.Helper()
		resp, err := http.Get(fmt.Sprintf("http://%s/varz", addr))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
			t.Fatalf("/varz: %v", err)
		}
		return v
	}
	before := varz()
	nc := connect(t, ConnOptions{URL: e.ClientURL()})
	if err := nc.Publish("weir.test", make([]byte, 1000)); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	after := varz()
	if after.InMsgs-before.InMsgs != 1 || after.InBytes-before.InBytes != 1000 {
		t.Fatalf("/varz counted %d messages and %d bytes, want 1 and 1000", after.InMsgs-before.InMsgs, after.InBytes-before.InBytes)
	}
}

func TestEmbeddedConfigFile(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "nats.conf")
	store := filepath.Join(dir, "js")
	body := fmt.Sprintf("listen: \"127.0.0.1:-1\"\nauthorization { token: \"from-config\" }\njetstream { store_dir: %q }\n", store)
	if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Run("config alone", func(t *testing.T) {
		leaktest.Check(t)
		e, err := StartEmbedded(EmbedOptions{ConfigFile: conf}, testLog(t))
		if err != nil {
			t.Fatal(err)
		}
		defer e.Shutdown()
		connect(t, ConnOptions{URL: e.ClientURL(), Token: "from-config"}).Close()
		mustNotConnect(t, ConnOptions{URL: e.ClientURL()})
		if got := e.Server().JetStreamConfig().StoreDir; !strings.HasPrefix(got, store) {
			t.Fatalf("store dir %s, want under %s", got, store)
		}
	})
	t.Run("flags override", func(t *testing.T) {
		e := startServer(t, EmbedOptions{ConfigFile: conf, HostPort: "127.0.0.1:0", User: "u", Password: "p"})
		connect(t, ConnOptions{URL: e.ClientURL(), User: "u", Password: "p"}).Close()
		mustNotConnect(t, ConnOptions{URL: e.ClientURL(), Token: "from-config"})
	})
}
