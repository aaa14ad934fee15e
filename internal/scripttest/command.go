package scripttest

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/weirstream/weir/internal/task"
)

// Command is one parsed script command: its name and its arguments, words of
// the form key=value or a bare key (a flag). Its getters read one argument
// each; a malformed, missing or repeated argument fails the test with the
// script's file:line, the key and the bad value. Every key a command is given
// must be read by one getter: after the command runs, Run fails on any key
// that none read, so a misspelt key is an error, not a silent default.
type Command struct {
	// Name is the command's first word.
	Name string
	// Where is the script position, "file:line".
	Where string

	args  map[string]string
	order []string        // keys in the order given
	flags map[string]bool // keys given without "="
	asked []string        // keys the getters asked for, in order, without repeats
	fatal func(msg string)
}

// parseCommand splits line into a command; fatal reports a bad line or
// argument and must not return.
func parseCommand(where, line string, fatal func(msg string)) *Command {
	words := strings.Fields(line)
	c := &Command{Where: where, args: map[string]string{}, flags: map[string]bool{}, fatal: fatal}
	if len(words) == 0 {
		c.failf("empty command")
	}
	c.Name = words[0]
	for _, w := range words[1:] {
		k, v, hasValue := strings.Cut(w, "=")
		if k == "" {
			c.failf("argument %q has no key", w)
		}
		if _, dup := c.args[k]; dup {
			c.failf("key %s given twice (%s=%s and %s)", k, k, c.args[k], w)
		}
		c.args[k] = v
		c.order = append(c.order, k)
		if !hasValue {
			c.flags[k] = true
		}
	}
	return c
}

func (c *Command) failf(format string, args ...any) {
	c.fatal(fmt.Sprintf("%s: %s: %s", c.Where, c.Name, fmt.Sprintf(format, args...)))
}

// Fatalf fails the test with a message that names the script position and
// the command.
func (c *Command) Fatalf(format string, args ...any) { c.failf(format, args...) }

// value returns key's value and whether it was given with one; a bare key
// read as a value is an error.
func (c *Command) value(key string) (string, bool) {
	if !slices.Contains(c.asked, key) {
		c.asked = append(c.asked, key)
	}
	v, ok := c.args[key]
	if ok && c.flags[key] {
		c.failf("%s needs a value (%s=...)", key, key)
	}
	return v, ok
}

// Has reports whether key was given (with or without a value). Has alone
// does not count as reading the key.
func (c *Command) Has(key string) bool {
	_, ok := c.args[key]
	return ok
}

// Flag reports whether the bare word key was given; key=value is an error.
func (c *Command) Flag(key string) bool {
	if !slices.Contains(c.asked, key) {
		c.asked = append(c.asked, key)
	}
	_, ok := c.args[key]
	if ok && !c.flags[key] {
		c.failf("%s is a flag and takes no value, got %s=%s", key, key, c.args[key])
	}
	return ok
}

// String returns key's value; a missing key is an error.
func (c *Command) String(key string) string {
	v, ok := c.value(key)
	if !ok {
		c.failf("missing %s=...", key)
	}
	return v
}

// StringOr returns key's value, or def when key is not given.
func (c *Command) StringOr(key, def string) string {
	if v, ok := c.value(key); ok {
		return v
	}
	return def
}

// typed parses key's value with parse; def is returned when the key is
// missing and optional is set.
func typed[T any](c *Command, key string, optional bool, def T, want string, parse func(string) (T, error)) T {
	v, ok := c.value(key)
	if !ok {
		if optional {
			return def
		}
		c.failf("missing %s=<%s>", key, want)
	}
	x, err := parse(v)
	if err != nil {
		c.failf("%s=%q: want %s: %v", key, v, want, err)
	}
	return x
}

func parseInt(s string) (int, error)                { return strconv.Atoi(s) }
func parseUint64(s string) (uint64, error)          { return strconv.ParseUint(s, 10, 64) }
func parseFloat64(s string) (float64, error)        { return strconv.ParseFloat(s, 64) }
func parseDuration(s string) (time.Duration, error) { return time.ParseDuration(s) }

// Int returns key's value as an int; missing or malformed is an error.
func (c *Command) Int(key string) int { return typed(c, key, false, 0, "an integer", parseInt) }

// IntOr returns key's value as an int, or def when key is not given.
func (c *Command) IntOr(key string, def int) int {
	return typed(c, key, true, def, "an integer", parseInt)
}

// Uint64 returns key's value as a uint64; missing or malformed is an error.
func (c *Command) Uint64(key string) uint64 {
	return typed(c, key, false, 0, "an unsigned integer", parseUint64)
}

// Uint64Or returns key's value as a uint64, or def when key is not given.
func (c *Command) Uint64Or(key string, def uint64) uint64 {
	return typed(c, key, true, def, "an unsigned integer", parseUint64)
}

// Float64Or returns key's value as a float64, or def when key is not given.
func (c *Command) Float64Or(key string, def float64) float64 {
	return typed(c, key, true, def, "a number", parseFloat64)
}

// Duration returns key's value as a duration (e.g. 1.5s); missing or
// malformed is an error.
func (c *Command) Duration(key string) time.Duration {
	return typed(c, key, false, 0, "a duration", parseDuration)
}

// DurationOr returns key's value as a duration, or def when key is not given.
func (c *Command) DurationOr(key string, def time.Duration) time.Duration {
	return typed(c, key, true, def, "a duration", parseDuration)
}

// Uint64ListOr returns key's comma-separated unsigned integers, or nil when
// key is not given or empty.
func (c *Command) Uint64ListOr(key string) []uint64 {
	return typed(c, key, true, nil, "comma-separated unsigned integers", listOf(parseUint64))
}

// listOf parses a comma-separated list with parse; "" is an empty list.
func listOf[T any](parse func(string) (T, error)) func(string) ([]T, error) {
	return func(s string) ([]T, error) {
		if s == "" {
			return nil, nil
		}
		var out []T
		for _, w := range strings.Split(s, ",") {
			v, err := parse(w)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	}
}

// Task returns key's value, op/instance, as a task identity (OperatorID 0).
func (c *Command) Task(key string) task.ID {
	return typed(c, key, false, task.ID{}, "op/instance", ParseTask)
}

// TaskListOr returns key's comma-separated op/instance values, or nil when
// key is not given or empty.
func (c *Command) TaskListOr(key string) []task.ID {
	return typed(c, key, true, nil, "comma-separated op/instance", listOf(ParseTask))
}

// ParseTask parses op/instance into a task identity (OperatorID 0).
func ParseTask(word string) (task.ID, error) {
	op, inst, ok := strings.Cut(word, "/")
	if !ok || op == "" {
		return task.ID{}, fmt.Errorf("task %q is not op/instance", word)
	}
	n, err := strconv.Atoi(inst)
	if err != nil || n < 0 {
		return task.ID{}, fmt.Errorf("task %q: instance %q is not a non-negative integer", word, inst)
	}
	return task.ID{Operator: op, Instance: n}, nil
}

// checkAllRead fails on any given key that no getter read.
func (c *Command) checkAllRead() {
	var unknown []string
	for _, k := range c.order {
		if slices.Contains(c.asked, k) {
			continue
		}
		if c.flags[k] {
			unknown = append(unknown, k)
		} else {
			unknown = append(unknown, k+"="+c.args[k])
		}
	}
	if len(unknown) == 0 {
		return
	}
	reads := "no arguments"
	if len(c.asked) > 0 {
		reads = strings.Join(c.asked, ", ")
	}
	c.failf("unknown argument %s (this command reads %s)", strings.Join(unknown, " "), reads)
}
