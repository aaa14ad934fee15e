package cluster

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestConnOptionsValidate(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f.pem")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.pem")
	for _, tc := range []struct {
		name string
		o    ConnOptions
		want []string // substrings of the error; none means valid
	}{
		{name: "zero value", o: ConnOptions{}},
		{name: "user and password", o: ConnOptions{URL: "nats://h:4222", User: "u", Password: "p"}},
		{name: "token", o: ConnOptions{Token: "t"}},
		{name: "tls files", o: ConnOptions{URL: "tls://127.0.0.1:4222", CA: file, Cert: file, Key: file}},
		{name: "url list", o: ConnOptions{URL: "nats://a:1, b:2 ,tls://c:3"}},
		{name: "cert without key", o: ConnOptions{Cert: file}, want: []string{"--nats-cert needs --nats-key"}},
		{name: "key without cert", o: ConnOptions{Key: file}, want: []string{"--nats-key needs --nats-cert"}},
		{name: "user without password", o: ConnOptions{User: "u"}, want: []string{"--nats-user needs --nats-password"}},
		{name: "password without user", o: ConnOptions{Password: "p"}, want: []string{"--nats-password needs --nats-user"}},
		{name: "user and token", o: ConnOptions{User: "u", Password: "p", Token: "t"}, want: []string{"--nats-token and --nats-user"}},
		{name: "creds and token", o: ConnOptions{Creds: file, Token: "t"}, want: []string{"--nats-creds cannot"}},
		{name: "missing creds", o: ConnOptions{Creds: missing}, want: []string{"--nats-creds", "missing.pem"}},
		{name: "missing ca", o: ConnOptions{CA: missing}, want: []string{"--nats-ca", "no such file"}},
		{name: "ca is a directory", o: ConnOptions{CA: dir}, want: []string{"--nats-ca", "not a regular file"}},
		{name: "missing cert and key", o: ConnOptions{Cert: missing, Key: missing}, want: []string{"--nats-cert", "--nats-key"}},
		{name: "bad scheme", o: ConnOptions{URL: "http://h:1"}, want: []string{"--nats", "scheme"}},
		{name: "empty url in list", o: ConnOptions{URL: "nats://a:1,,"}, want: []string{"--nats", "empty server URL"}},
		{name: "bad url hides password", o: ConnOptions{URL: "http://u:hunter2@h:1"}, want: []string{"--nats", "***@h:1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.o.Validate()
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate: nil, want error with %q", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("error %q shows the password", err)
			}
		})
	}
}

func TestRedactURLs(t *testing.T) {
	for in, want := range map[string]string{
		"nats://127.0.0.1:4222":                "nats://127.0.0.1:4222",
		"nats://u:secret@h:4222":               "nats://***@h:4222",
		"tok@h:4222":                           "***@h:4222",
		"nats://tok@a:1, tls://u:p@b:2":        "nats://***@a:1,tls://***@b:2",
		"nats://u:p%40ss@h:1":                  "nats://***@h:1",
		"nats://u:has@at@h:1":                  "nats://***@h:1",
		"":                                     "",
		"nats://h:1,nats://x:y@h2:1,nats://h3": "nats://h:1,nats://***@h2:1,nats://h3",
	} {
		if got := redactURLs(in); got != want {
			t.Errorf("redactURLs(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRegisterConnFlags(t *testing.T) {
	fs := flag.NewFlagSet("node", flag.ContinueOnError)
	o := ConnOptions{Name: "keep"}
	RegisterConnFlags(fs, &o)
	err := fs.Parse([]string{
		"--nats", "nats://h:1", "--nats-creds", "c.creds", "--nats-user", "u", "--nats-password", "p",
		"--nats-token", "t", "--nats-ca", "ca.pem", "--nats-cert", "c.pem", "--nats-key", "k.pem",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := ConnOptions{URL: "nats://h:1", Creds: "c.creds", User: "u", Password: "p", Token: "t",
		CA: "ca.pem", Cert: "c.pem", Key: "k.pem", Name: "keep"}
	if o != want {
		t.Fatalf("parsed %+v\nwant   %+v", o, want)
	}
	n := 0
	fs.VisitAll(func(f *flag.Flag) {
		n++
		if len(f.Usage) < 20 {
			t.Errorf("flag --%s: help %q says too little", f.Name, f.Usage)
		}
	})
	if n != 8 {
		t.Fatalf("%d flags registered, want 8", n)
	}
}

// TestReconnectWaitBacksOff: the first reconnect attempt comes after 10 ms,
// each wait doubles, and none exceeds ReconnectWait.
func TestReconnectWaitBacksOff(t *testing.T) {
	want := map[int]time.Duration{0: 10 * time.Millisecond, 1: 10 * time.Millisecond, 2: 20 * time.Millisecond, 3: 40 * time.Millisecond,
		5: 160 * time.Millisecond, 6: 320 * time.Millisecond, 7: ReconnectWait, 40: ReconnectWait, 1 << 30: ReconnectWait}
	for n, d := range want {
		if got := reconnectWait(n); got != d {
			t.Errorf("reconnectWait(%d) = %v, want %v", n, got, d)
		}
	}
}
