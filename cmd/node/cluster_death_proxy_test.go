package main

import (
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

// tcpProxy forwards connections from its own port to a target address; cut
// drops every connection it carries and refuses new ones for a while, as a
// proxy or load balancer in front of NATS may.
type tcpProxy struct {
	ln     net.Listener
	target string

	mu      sync.Mutex
	conns   map[net.Conn]bool
	refuse  time.Time // connections accepted before this are closed at once
	wg      sync.WaitGroup
	stopped bool
}

// startProxy listens on a free loopback port and forwards to target until
// the test ends.
func startProxy(t *testing.T, target string) *tcpProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &tcpProxy{ln: ln, target: target, conns: map[net.Conn]bool{}}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.stop)
	return p
}

// URL is the NATS URL that goes through the proxy.
func (p *tcpProxy) URL() string { return "nats://" + p.ln.Addr().String() }

// accept forwards each accepted connection, or closes it while refusing.
func (p *tcpProxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		refusing := time.Now().Before(p.refuse)
		p.mu.Unlock()
		if refusing {
			_ = c.Close()
			continue
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = c.Close()
			continue
		}
		if !p.track(c, up) {
			return
		}
		p.wg.Add(2)
		go p.pipe(c, up)
		go p.pipe(up, c)
	}
}

// track records a forwarded pair; false (both closed) once stopped.
func (p *tcpProxy) track(c, up net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		_ = c.Close()
		_ = up.Close()
		return false
	}
	p.conns[c], p.conns[up] = true, true
	return true
}

// pipe copies one direction until either side closes, then closes both.
func (p *tcpProxy) pipe(dst, src net.Conn) {
	defer p.wg.Done()
	_, _ = io.Copy(dst, src)
	_ = dst.Close()
	_ = src.Close()
	p.mu.Lock()
	delete(p.conns, dst)
	delete(p.conns, src)
	p.mu.Unlock()
}

// cut closes every forwarded connection and refuses new ones for d.
func (p *tcpProxy) cut(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.refuse = time.Now().Add(d)
	for c := range p.conns {
		_ = c.Close()
	}
}

// stop closes the listener and every connection and waits for the
// goroutines. Idempotent.
func (p *tcpProxy) stop() {
	p.mu.Lock()
	p.stopped = true
	for c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	_ = p.ln.Close()
	p.wg.Wait()
}
