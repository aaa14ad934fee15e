package cluster

import (
	"bufio"
	"errors"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

const dataSubject = "weir.j1.data.0.0.0"

// roundTrip checks that pub's message on dataSubject reaches sub.
func roundTrip(t *testing.T, pub, sub *nats.Conn, payload string) {
	t.Helper()
	s, err := sub.SubscribeSync(dataSubject)
	if err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	defer func() { _ = s.Unsubscribe() }()
	if err := sub.Flush(); err != nil {
		t.Fatalf("flush: %v", err)
	}
	if err := pub.Publish(dataSubject, []byte(payload)); err != nil {
		t.Fatalf("publish: %v", err)
	}
	m, err := s.NextMsg(5 * time.Second)
	if err != nil {
		t.Fatalf("next message: %v", err)
	}
	if string(m.Data) != payload {
		t.Fatalf("got %q, want %q", m.Data, payload)
	}
}

// mustNotConnect checks that o is refused with an authorization error that
// names the server but none of the secrets.
func mustNotConnect(t *testing.T, o ConnOptions, secrets ...string) {
	t.Helper()
	nc, err := o.Connect(testLog(t))
	if err == nil {
		nc.Close()
		t.Fatalf("connected with %+v, want an authorization error", o)
	}
	if !errors.Is(err, nats.ErrAuthorization) {
		t.Fatalf("err = %v, want nats.ErrAuthorization", err)
	}
	u, _ := url.Parse(o.URL)
	if !strings.Contains(err.Error(), u.Host) {
		t.Errorf("error %q does not name the server %s", err, u.Host)
	}
	for _, s := range secrets {
		if s != "" && strings.Contains(err.Error(), s) {
			t.Errorf("error %q shows secret %q", err, s)
		}
	}
}

// rawInject speaks the NATS protocol without credentials: it tries to
// subscribe to and publish on weir data subjects, and returns what the
// server answered until it closed the connection.
func rawInject(t *testing.T, clientURL string) string {
	t.Helper()
	u, err := url.Parse(clientURL)
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.DialTimeout("tcp", u.Host, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write([]byte("CONNECT {\"verbose\":false,\"pedantic\":false}\r\n" +
		"SUB weir.> 1\r\nPUB " + dataSubject + " 6\r\ninject\r\nPING\r\n")); err != nil {
		t.Fatal(err)
	}
	var got strings.Builder
	sc := bufio.NewScanner(c)
	for sc.Scan() { // until the server closes the connection
		got.WriteString(sc.Text() + "\n")
	}
	if ne, ok := sc.Err().(net.Error); ok && ne.Timeout() {
		t.Fatalf("server did not close the unauthenticated connection; got %q", got.String())
	}
	return got.String()
}

// checkNoInjection asserts that an unauthenticated raw client is refused and
// that its message never reaches an authorised subscriber.
func checkNoInjection(t *testing.T, e *Embedded, good ConnOptions) {
	t.Helper()
	sub := connect(t, good)
	s, err := sub.SubscribeSync(dataSubject)
	if err != nil {
		t.Fatal(err)
	}
	if err := sub.Flush(); err != nil {
		t.Fatal(err)
	}
	answer := rawInject(t, e.ClientURL())
	if !strings.Contains(strings.ToLower(answer), "authorization violation") {
		t.Fatalf("raw client got %q, want an authorization violation", answer)
	}
	if strings.Contains(answer, "MSG ") {
		t.Fatalf("raw client received messages: %q", answer)
	}
	// The raw connection is closed; a marker from an authorised client must
	// be the first message the subscriber sees.
	pub := connect(t, good)
	if err := pub.Publish(dataSubject, []byte("marker")); err != nil {
		t.Fatal(err)
	}
	m, err := s.NextMsg(5 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if string(m.Data) != "marker" {
		t.Fatalf("subscriber got %q first: the unauthenticated client injected data", m.Data)
	}
}

func TestSecurityUserPassword(t *testing.T) {
	e := startServer(t, EmbedOptions{User: "weir", Password: "s3cret-pw"})
	good := ConnOptions{URL: e.ClientURL(), User: "weir", Password: "s3cret-pw", Name: "good"}
	roundTrip(t, connect(t, good), connect(t, good), "hello")

	mustNotConnect(t, ConnOptions{URL: e.ClientURL()})
	mustNotConnect(t, ConnOptions{URL: e.ClientURL(), User: "weir", Password: "wrong-pw"}, "wrong-pw")
	mustNotConnect(t, ConnOptions{URL: e.ClientURL(), User: "mallory", Password: "s3cret-pw"}, "s3cret-pw")
	u, _ := url.Parse(e.ClientURL())
	u.User = url.UserPassword("weir", "url-pw")
	mustNotConnect(t, ConnOptions{URL: u.String()}, "url-pw")
	checkNoInjection(t, e, good)
}

func TestSecurityToken(t *testing.T) {
	e := startServer(t, EmbedOptions{Token: "tok-123456"})
	good := ConnOptions{URL: e.ClientURL(), Token: "tok-123456"}
	roundTrip(t, connect(t, good), connect(t, good), "hello")

	mustNotConnect(t, ConnOptions{URL: e.ClientURL()})
	mustNotConnect(t, ConnOptions{URL: e.ClientURL(), Token: "tok-wrong"}, "tok-wrong")
	mustNotConnect(t, ConnOptions{URL: e.ClientURL(), User: "tok-123456", Password: "x"}, "tok-123456")
	checkNoInjection(t, e, good)
}

func TestSecurityTLS(t *testing.T) {
	pki := newTestPKI(t)
	e := startServer(t, EmbedOptions{TLSCert: pki.ServerCert, TLSKey: pki.ServerKey, Token: "tls-tok"})
	if !strings.HasPrefix(e.ClientURL(), "tls://") {
		t.Fatalf("ClientURL = %s, want tls://", e.ClientURL())
	}
	good := ConnOptions{URL: e.ClientURL(), CA: pki.CA, Token: "tls-tok"}
	roundTrip(t, connect(t, good), connect(t, good), "over tls")

	// The client does not trust the server without --nats-ca.
	if nc, err := (ConnOptions{URL: e.ClientURL(), Token: "tls-tok"}).Connect(testLog(t)); err == nil {
		nc.Close()
		t.Fatal("connected without the CA")
	} else if !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("err = %v, want a certificate error", err)
	}
	// Nor with a CA that did not sign the server certificate.
	if nc, err := (ConnOptions{URL: e.ClientURL(), CA: pki.OtherCA, Token: "tls-tok"}).Connect(testLog(t)); err == nil {
		nc.Close()
		t.Fatal("connected with the wrong CA")
	}
	// TLS does not replace authentication.
	mustNotConnect(t, ConnOptions{URL: e.ClientURL(), CA: pki.CA})
}

func TestSecurityMutualTLS(t *testing.T) {
	pki := newTestPKI(t)
	e := startServer(t, EmbedOptions{TLSCert: pki.ServerCert, TLSKey: pki.ServerKey, TLSCA: pki.CA})
	good := ConnOptions{URL: e.ClientURL(), CA: pki.CA, Cert: pki.ClientCert, Key: pki.ClientKey}
	roundTrip(t, connect(t, good), connect(t, good), "mutual")

	nc, err := (ConnOptions{URL: e.ClientURL(), CA: pki.CA}).Connect(testLog(t))
	if err == nil {
		nc.Close()
		t.Fatal("connected without a client certificate")
	}
	// A certificate the server's CA did not sign is refused too.
	nc, err = (ConnOptions{URL: e.ClientURL(), CA: pki.CA, Cert: pki.ServerCert, Key: pki.ServerKey}).Connect(testLog(t))
	if err == nil {
		// The server certificate is signed by the same CA but lacks client
		// auth usage; Go's server-side verification rejects it.
		nc.Close()
		t.Fatal("connected with a certificate without client auth usage")
	}
}
