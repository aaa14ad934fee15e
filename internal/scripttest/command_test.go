package scripttest

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir/internal/task"
)

// failed is what the test fatal function panics with, so a table test can
// see the message a script would fail with.
type failed struct{ msg string }

// runCommand parses line, runs read on it and checks that every argument
// was read; it returns the failure message, "" when none.
func runCommand(line string, read func(c *Command)) (msg string) {
	defer func() {
		if r := recover(); r != nil {
			f, ok := r.(failed)
			if !ok {
				panic(r)
			}
			msg = f.msg
		}
	}()
	c := parseCommand("s.txt:7", line, func(m string) { panic(failed{m}) })
	read(c)
	c.checkAllRead()
	return ""
}

func TestCommandGettersReadValues(t *testing.T) {
	var (
		n       int
		u       uint64
		d, dd   time.Duration
		f       float64
		s, def  string
		on, off bool
		list    []uint64
		tasks   []task.ID
		one     task.ID
		empty   []uint64
	)
	msg := runCommand("new n=-3 u=18446744073709551615 d=1.5s f=0.25 s=x on list=1,2,3 tasks=a/0,b/2 t=op/4 e=", func(c *Command) {
		n, u, d, dd = c.Int("n"), c.Uint64("u"), c.Duration("d"), c.DurationOr("absent", 7*time.Millisecond)
		f, s, def = c.Float64Or("f", 1), c.String("s"), c.StringOr("nope", "dflt")
		on, off = c.Flag("on"), c.Flag("off")
		list, tasks, one, empty = c.Uint64ListOr("list"), c.TaskListOr("tasks"), c.Task("t"), c.Uint64ListOr("e")
	})
	if msg != "" {
		t.Fatalf("unexpected failure: %s", msg)
	}
	got := []any{n, u, d, dd, f, s, def, on, off, list, tasks, one, empty}
	want := []any{-3, uint64(1<<64 - 1), 1500 * time.Millisecond, 7 * time.Millisecond, 0.25, "x", "dflt", true, false,
		[]uint64{1, 2, 3}, []task.ID{{Operator: "a"}, {Operator: "b", Instance: 2}}, task.ID{Operator: "op", Instance: 4}, []uint64(nil)}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v\nwant %#v", got, want)
	}
}

// Every bad argument fails with the script position, the command, the key
// and the bad value.
func TestCommandErrorsNamePositionKeyAndValue(t *testing.T) {
	for _, tc := range []struct {
		name string
		line string
		read func(c *Command)
		want string
	}{
		{"not an int", "new inputs=two", func(c *Command) { c.Int("inputs") }, `s.txt:7: new: inputs="two": want an integer`},
		{"negative uint", "ack id=-1", func(c *Command) { c.Uint64Or("id", 0) }, `s.txt:7: ack: id="-1": want an unsigned integer`},
		{"bad duration", "tick now=5", func(c *Command) { c.Duration("now") }, `s.txt:7: tick: now="5": want a duration`},
		{"bad float", "new mult=x", func(c *Command) { c.Float64Or("mult", 0) }, `s.txt:7: new: mult="x": want a number`},
		{"missing", "tick", func(c *Command) { c.Duration("now") }, `s.txt:7: tick: missing now=<a duration>`},
		{"missing string", "fail", func(c *Command) { c.String("cause") }, `s.txt:7: fail: missing cause=...`},
		{"empty int", "new inputs=", func(c *Command) { c.Int("inputs") }, `s.txt:7: new: inputs="": want an integer`},
		{"bad task", "ack task=op", func(c *Command) { c.Task("task") }, `s.txt:7: ack: task="op": want op/instance: task "op" is not op/instance`},
		{"bad task instance", "ack task=op/x", func(c *Command) { c.Task("task") }, `instance "x" is not a non-negative integer`},
		{"bad list", "new consumed=1,x", func(c *Command) { c.Uint64ListOr("consumed") }, `s.txt:7: new: consumed="1,x": want comma-separated unsigned integers`},
		{"bad task list", "new tasks=a/0,b", func(c *Command) { c.TaskListOr("tasks") }, `s.txt:7: new: tasks="a/0,b": want comma-separated op/instance`},
		{"flag with value", "barrier final=yes", func(c *Command) { c.Flag("final") }, `s.txt:7: barrier: final is a flag and takes no value, got final=yes`},
		{"value as flag", "new inputs", func(c *Command) { c.Int("inputs") }, `s.txt:7: new: inputs needs a value (inputs=...)`},
		{"repeated key", "new inputs=1 inputs=2", func(c *Command) {}, `s.txt:7: new: key inputs given twice (inputs=1 and inputs=2)`},
		{"no key", "new =3", func(c *Command) {}, `s.txt:7: new: argument "=3" has no key`},
		{"unknown key", "new inputs=2 inptus=3 bogus", func(c *Command) { c.Int("inputs"); c.StringOr("mode", "") },
			`s.txt:7: new: unknown argument inptus=3 bogus (this command reads inputs, mode)`},
		{"key of a command that reads none", "pending x=1", func(c *Command) {}, `s.txt:7: pending: unknown argument x=1 (this command reads no arguments)`},
		{"Has is not a read", "new job-max=1", func(c *Command) { c.Has("job-max") }, `unknown argument job-max=1`},
		{"Fatalf", "tick", func(c *Command) { c.Fatalf("before new") }, `s.txt:7: tick: before new`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msg := runCommand(tc.line, tc.read)
			if !strings.Contains(msg, tc.want) {
				t.Fatalf("%q: failure %q, want it to contain %q", tc.line, msg, tc.want)
			}
		})
	}
}
