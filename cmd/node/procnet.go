package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/rs/zerolog"

	"github.com/weirstream/weir/cluster"
	"github.com/weirstream/weir/internal/poll"
)

// netOptions shape a nodeNet.
type netOptions struct {
	Exe       string        // the node binary
	Dir       string        // workdirs and logs of the nodes
	Nodes     int           // n1 … nN
	Slots     int           // each node's --slots; 0 keeps the node's default
	Heartbeat time.Duration // each node's --heartbeat-timeout
	LogLevel  string        // each node's --log-level
	// NATSApart runs the NATS server in this process instead of in n1, so
	// that every node can be killed.
	NATSApart bool
	// Monitor serves NATS's HTTP monitoring (for /varz).
	Monitor bool
	// Args are more `node start` flags for every node.
	Args []string
}

// nodeNet is a cluster of `node start` processes on this machine, as the
// cluster benchmark and the chaos soak start it: NATS runs embedded in n1
// (with NATSApart, in this process) and the other nodes join it. Every
// node's stderr goes to DIR/ID.log; stop kills what is left and waits.
type nodeNet struct {
	opts    netOptions
	url     string // the NATS server's client URL
	monitor string // its monitoring base URL, with Monitor
	embed   *cluster.Embedded
	nc      *nats.Conn
	mu      sync.Mutex
	nodes   map[string]*nodeProc
}

// nodeProc is one running node process.
type nodeProc struct {
	cmd    *exec.Cmd
	exited chan struct{} // closed when the process has been reaped
}

// nodeID is the id of the i-th node (from 1).
func nodeID(i int) string { return fmt.Sprintf("n%d", i) }

// startNodeNet starts the nodes and waits until they all see each other.
func startNodeNet(o netOptions) (*nodeNet, error) {
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, err
	}
	nn := &nodeNet{opts: o, nodes: map[string]*nodeProc{}}
	ok := false
	defer func() {
		if !ok {
			nn.stop()
		}
	}()
	if o.NATSApart {
		eo := cluster.EmbedOptions{HostPort: "127.0.0.1:0", StoreDir: filepath.Join(o.Dir, "nats")}
		if o.Monitor {
			ports, err := freePorts(1)
			if err != nil {
				return nil, err
			}
			eo.MonitorHostPort = fmt.Sprintf("127.0.0.1:%d", ports[0])
			nn.monitor = "http://" + eo.MonitorHostPort
		}
		e, err := cluster.StartEmbedded(eo, zerolog.Nop())
		if err != nil {
			return nil, fmt.Errorf("NATS server: %w", err)
		}
		nn.embed, nn.url = e, e.ClientURL()
	} else {
		ports, err := freePorts(2)
		if err != nil {
			return nil, err
		}
		nn.url = fmt.Sprintf("nats://127.0.0.1:%d", ports[0])
		if o.Monitor {
			nn.monitor = fmt.Sprintf("http://127.0.0.1:%d", ports[1])
		}
	}
	if err := nn.startNode(nodeID(1)); err != nil {
		return nil, err
	}
	var err error
	connected := func() bool { nn.nc, err = nats.Connect(nn.url); return err == nil }
	if !poll.Until(30*time.Second, 50*time.Millisecond, connected) {
		return nil, fmt.Errorf("NATS server at %s: %w", nn.url, err)
	}
	for i := 2; i <= o.Nodes; i++ {
		if err := nn.startNode(nodeID(i)); err != nil {
			return nil, err
		}
	}
	if err := nn.waitNodes(o.Nodes, 30*time.Second); err != nil {
		return nil, err
	}
	ok = true
	return nn, nil
}

// freePorts finds n free TCP ports on the loopback address.
func freePorts(n int) ([]int, error) {
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("find a free port: %w", err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// embedsNATS reports whether node id runs the NATS server.
func (nn *nodeNet) embedsNATS(id string) bool { return !nn.opts.NATSApart && id == nodeID(1) }

// startNode starts (or restarts, with the same workdir) node id.
func (nn *nodeNet) startNode(id string) error {
	log, err := os.OpenFile(nn.logPath(id), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	args := []string{"start", "--id", id, "--workdir", filepath.Join(nn.opts.Dir, id),
		"--heartbeat-timeout", nn.opts.Heartbeat.String(), "--log-level", nn.opts.LogLevel}
	if nn.opts.Slots > 0 {
		args = append(args, "--slots", fmt.Sprint(nn.opts.Slots))
	}
	args = append(args, nn.opts.Args...)
	if nn.embedsNATS(id) {
		hostPort := strings.TrimPrefix(nn.url, "nats://")
		args = append(args, "--embed-nats", hostPort)
		if nn.monitor != "" {
			args = append(args, "--embed-monitor", strings.TrimPrefix(nn.monitor, "http://"))
		}
	} else {
		args = append(args, "--nats", nn.url)
	}
	cmd := exec.Command(nn.opts.Exe, args...)
	cmd.Stderr = log
	if err := cmd.Start(); err != nil {
		log.Close()
		return fmt.Errorf("start node %s: %w", id, err)
	}
	p := &nodeProc{cmd: cmd, exited: make(chan struct{})}
	go func() { _ = cmd.Wait(); log.Close(); close(p.exited) }()
	nn.mu.Lock()
	nn.nodes[id] = p
	nn.mu.Unlock()
	return nil
}

// kill sends SIGKILL to node id and waits until it has exited.
func (nn *nodeNet) kill(id string) error {
	nn.mu.Lock()
	p := nn.nodes[id]
	delete(nn.nodes, id)
	nn.mu.Unlock()
	if p == nil {
		return fmt.Errorf("kill node %s: not running", id)
	}
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		return fmt.Errorf("kill node %s: %w", id, err)
	}
	<-p.exited
	return nil
}

// waitNodes waits until n nodes answer the status and each sees all n.
func (nn *nodeNet) waitNodes(n int, within time.Duration) error {
	all := func() bool { s, err := nn.status(); return err == nil && s.allSeeAll(n) }
	if !poll.Until(within, 100*time.Millisecond, all) {
		return fmt.Errorf("%d nodes did not all answer within %v", n, within)
	}
	return nil
}

// client runs a client command against the cluster; out is its stdout and
// stderr together.
func (nn *nodeNet) client(args ...string) ([]byte, error) {
	cmd := exec.Command(nn.opts.Exe, append(args, "--nats", nn.url)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.Bytes(), err
}

// status reads `node status --json`.
func (nn *nodeNet) status() (statusView, error) {
	var s statusView
	out, err := exec.Command(nn.opts.Exe, "status", "--json", "--wait", "500ms", "--nats", nn.url).Output()
	if err != nil {
		return s, fmt.Errorf("node status: %w", err)
	}
	return s, json.Unmarshal(out, &s)
}

// logPath is where node id's stderr goes.
func (nn *nodeNet) logPath(id string) string { return filepath.Join(nn.opts.Dir, id+".log") }

// logTails is the end of each node's log (at most n bytes of each), for an
// error report.
func (nn *nodeNet) logTails(n int) string {
	var b strings.Builder
	for i := 1; i <= nn.opts.Nodes; i++ {
		id := nodeID(i)
		data, err := os.ReadFile(nn.logPath(id))
		if err != nil {
			fmt.Fprintf(&b, "--- log of %s: %v\n", id, err)
			continue
		}
		if len(data) > n {
			data = data[len(data)-n:]
		}
		fmt.Fprintf(&b, "--- end of %s's log:\n%s\n", id, data)
	}
	return b.String()
}

// stop kills the nodes, waits for them and shuts the NATS server down. It
// is safe to call more than once.
func (nn *nodeNet) stop() {
	nn.mu.Lock()
	procs := nn.nodes
	nn.nodes = map[string]*nodeProc{}
	nn.mu.Unlock()
	for _, p := range procs {
		_ = p.cmd.Process.Signal(syscall.SIGKILL)
	}
	for _, p := range procs {
		<-p.exited
	}
	if nn.nc != nil {
		nn.nc.Close()
	}
	if nn.embed != nil {
		nn.embed.Shutdown()
	}
}

// lockedBuffer is a bytes.Buffer that a process's output and a reader may
// use at once.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// lastBytes is the end of s, at most n bytes.
func lastBytes(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// errNoJob is returned by jobView when the status lists no such job.
var errNoJob = errors.New("no such job in the status")

// jobView is the named job in a status.
func (s statusView) jobView(name string) (jobStatusView, error) {
	for _, j := range s.Jobs {
		if j.Name == name {
			return j, nil
		}
	}
	return jobStatusView{}, errNoJob
}
