// Package scripttest runs the scripted scenario tests of the protocol state
// machines. A script in testdata/*.txt is a list of blocks separated by blank
// lines:
//
//	# comments
//	command key=value ...
//	----
//	expected output, one line per action
//
// A command's arguments are read with the typed getters of Command; a bad
// value, a missing key or a key no getter reads fails the test at the
// script's file:line. Run with -rewrite to write the actual outputs back
// into the scripts.
package scripttest

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the expected output of testdata/*.txt scripts")

// Runner executes one command of a script and returns its output lines. It
// reads the command's arguments with the Command's getters; Run fails the
// test on any argument that none read.
type Runner func(t *testing.T, c *Command) []string

type block struct {
	pre  []string // comment and blank lines before the command
	line int
	cmd  string
	want []string
}

// Run runs every script matching glob, each with a fresh runner.
func Run(t *testing.T, glob string, newRunner func() Runner) {
	t.Helper()
	files, err := filepath.Glob(glob)
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts match %s: %v", glob, err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) { runFile(t, file, newRunner()) })
	}
}

func parse(t *testing.T, file string) (blocks []block, tail []string) {
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
		b := block{pre: pre, line: i + 1, cmd: l}
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

func runFile(t *testing.T, file string, run Runner) {
	blocks, tail := parse(t, file)
	var out strings.Builder
	for _, b := range blocks {
		c := parseCommand(fmt.Sprintf("%s:%d", file, b.line), b.cmd, func(msg string) { t.Helper(); t.Fatal(msg) })
		got := run(t, c)
		c.checkAllRead()
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
