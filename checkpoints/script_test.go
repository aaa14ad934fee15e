package checkpoints

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the expected output of testdata/*.txt scripts")

// A script in testdata/*.txt is a list of blocks separated by blank lines:
//
//	# comments
//	command key=value ...
//	----
//	expected output, one line per action
//
// Commands:
//
//	new interval=D timeout=D retain=R tasks=op/i,... [last=K] now=D
//	tick now=D
//	ack id=K task=op/i now=D
//	acks id=K now=D                      (every task acknowledges, in order)
//	decline id=K task=op/i reason=WORD now=D
//	written id=K now=D
//	failed id=K err=WORD now=D
//	final now=D
//	pending | completed
func TestScripts(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) { runScript(t, file) })
	}
}

type scriptBlock struct {
	pre  []string // comment and blank lines before the command
	line int
	cmd  string
	want []string
}

func parseScript(t *testing.T, file string) (blocks []scriptBlock, tail []string) {
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	var pre []string
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if strings.TrimSpace(l) == "" || strings.HasPrefix(l, "#") {
			pre = append(pre, l)
			continue
		}
		b := scriptBlock{pre: pre, line: i + 1, cmd: l}
		pre = nil
		i++
		if i >= len(lines) || lines[i] != "----" {
			t.Fatalf("%s:%d: want ---- after %q", file, b.line, l)
		}
		for i+1 < len(lines) && strings.TrimSpace(lines[i+1]) != "" {
			i++
			b.want = append(b.want, lines[i])
		}
		blocks = append(blocks, b)
	}
	return blocks, pre
}

func runScript(t *testing.T, file string) {
	blocks, tail := parseScript(t, file)
	var sc scriptState
	var out strings.Builder
	for _, b := range blocks {
		got := sc.run(t, fmt.Sprintf("%s:%d", file, b.line), b.cmd)
		for _, l := range b.pre {
			out.WriteString(l + "\n")
		}
		out.WriteString(b.cmd + "\n----\n")
		for _, l := range got {
			out.WriteString(l + "\n")
		}
		if !*rewrite && strings.Join(got, "\n") != strings.Join(b.want, "\n") {
			t.Errorf("%s:%d: %s\ngot:\n%s\nwant:\n%s", file, b.line, b.cmd,
				strings.Join(got, "\n"), strings.Join(b.want, "\n"))
		}
	}
	for _, l := range tail {
		out.WriteString(l + "\n")
	}
	if *rewrite {
		if err := os.WriteFile(file, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

type scriptState struct {
	c     *Coordinator
	tasks []TaskID
}

type scriptArgs struct {
	t     *testing.T
	where string
	kv    map[string]string
}

func (s scriptArgs) int(k string) int {
	v, err := strconv.Atoi(s.kv[k])
	if err != nil {
		s.t.Fatalf("%s: %s=%q: %v", s.where, k, s.kv[k], err)
	}
	return v
}

func (s scriptArgs) u64(k string) uint64 {
	if s.kv[k] == "" {
		return 0
	}
	v, err := strconv.ParseUint(s.kv[k], 10, 64)
	if err != nil {
		s.t.Fatalf("%s: %s=%q: %v", s.where, k, s.kv[k], err)
	}
	return v
}

func (s scriptArgs) dur(k string) time.Duration {
	v, err := time.ParseDuration(s.kv[k])
	if err != nil {
		s.t.Fatalf("%s: %s=%q: %v", s.where, k, s.kv[k], err)
	}
	return v
}

func (s scriptArgs) task(word string) TaskID {
	op, inst, ok := strings.Cut(word, "/")
	n, err := strconv.Atoi(inst)
	if !ok || err != nil {
		s.t.Fatalf("%s: task %q, want op/instance", s.where, word)
	}
	return TaskID{Operator: op, Instance: n}
}

func (sc *scriptState) run(t *testing.T, where, cmd string) []string {
	words := strings.Fields(cmd)
	a := scriptArgs{t: t, where: where, kv: map[string]string{}}
	for _, w := range words[1:] {
		k, v, _ := strings.Cut(w, "=")
		a.kv[k] = v
	}
	if words[0] != "new" && sc.c == nil {
		t.Fatalf("%s: %s before new", where, words[0])
	}
	c := sc.c
	switch words[0] {
	case "new":
		cfg := Config{Interval: a.dur("interval"), Timeout: a.dur("timeout"), Retain: a.int("retain")}
		if ts := a.kv["tasks"]; ts != "" {
			for _, w := range strings.Split(ts, ",") {
				cfg.Tasks = append(cfg.Tasks, a.task(w))
			}
		}
		nc, err := New(cfg, a.u64("last"), a.dur("now"))
		if err != nil {
			if errors.Is(err, ErrInvalidConfig) {
				return []string{"config error: " + err.Error()}
			}
			return []string{"error: " + err.Error()}
		}
		sc.c, sc.tasks = nc, cfg.Tasks
		return []string{"ok"}
	case "tick":
		return actionLines(c.Tick(a.dur("now")))
	case "ack":
		return actionLines(c.OnAck(a.u64("id"), a.task(a.kv["task"]), a.dur("now")))
	case "acks":
		var acts []Action
		for _, task := range sc.tasks {
			acts = append(acts, c.OnAck(a.u64("id"), task, a.dur("now"))...)
		}
		return actionLines(acts)
	case "decline":
		return actionLines(c.OnDecline(a.u64("id"), a.task(a.kv["task"]), a.kv["reason"], a.dur("now")))
	case "written":
		return actionLines(c.OnManifestWritten(a.u64("id"), a.dur("now")))
	case "failed":
		return actionLines(c.OnManifestFailed(a.u64("id"), errors.New(a.kv["err"]), a.dur("now")))
	case "final":
		return actionLines(c.RequestFinal(a.dur("now")))
	case "pending":
		if id, ok := c.Pending(); ok {
			return []string{strconv.FormatUint(id, 10)}
		}
		return []string{"none"}
	case "completed":
		return []string{fmt.Sprint(c.Completed())}
	}
	t.Fatalf("%s: unknown command %q", where, words[0])
	return nil
}

func actionLines(acts []Action) []string {
	if len(acts) == 0 {
		return []string{"(none)"}
	}
	out := make([]string, len(acts))
	for i, a := range acts {
		out[i] = a.String()
	}
	return out
}
