package cli

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/weirstream/weir"
)

// JobParams are the job flags `node run` parsed, handed to a job's builder.
type JobParams struct {
	Parallelism int
	Records     int64 // weir.Unbounded (-1) for no end
	Keys        int
	ValueBytes  int // bytes of keyed state per key (bigstate)
	Out         string
	SleepMs     float64
	Seed        int64
}

// Builder makes a job's graph from the flags.
type Builder func(p JobParams) (*weir.Graph, error)

// Job is what a JobBuilder makes: the graph and, optionally, a report the CLI
// prints after a successful run.
type Job struct {
	Graph *weir.Graph
	// Report, when set, writes a human-readable result to w after a successful
	// run (not with --json).
	Report func(w io.Writer) error
}

// JobBuilder makes a job with a report from the flags.
type JobBuilder func(p JobParams) (*Job, error)

// CommandFunc runs a subcommand with the arguments after its name and returns
// the exit code.
type CommandFunc func(ctx context.Context, args []string, stdout, stderr io.Writer) int

// jobEntry is one registered job.
type jobEntry struct {
	name, description string
	build             JobBuilder
	// declare declares the job's own flags and gives its builder (jobs
	// registered with RegisterWithFlags).
	declare FlagsJob
}

// commandEntry is one registered extra subcommand.
type commandEntry struct {
	name, usage, summary string
	run                  CommandFunc
}

// registry holds the jobs and extra subcommands a node binary knows.
type registry struct {
	mu       sync.Mutex
	jobs     map[string]jobEntry
	commands map[string]commandEntry
	// env replaces the process environment (tests); nil: os.Getenv.
	env func(string) string
}

func newRegistry() *registry {
	return &registry{jobs: map[string]jobEntry{}, commands: map[string]commandEntry{}}
}

// defaultRegistry is what Register, RegisterJob, RegisterCommand and Main use.
var defaultRegistry = newRegistry()

// Register adds a job under a name (panics on duplicates: programming error).
func Register(name, description string, b Builder) {
	defaultRegistry.addJob(name, description, wrapBuilder(b))
}

// RegisterJob is Register for a builder that also returns a report.
func RegisterJob(name, description string, b JobBuilder) {
	defaultRegistry.addJob(name, description, b)
}

// RegisterCommand adds a subcommand next to run, help and version; usage is its
// argument synopsis (e.g. "JOB [flags]"). Panics on duplicates and built-in names.
func RegisterCommand(name, usage, summary string, run CommandFunc) {
	defaultRegistry.addCommand(name, usage, summary, run)
}

// wrapBuilder adapts a Builder to a JobBuilder.
func wrapBuilder(b Builder) JobBuilder {
	if b == nil {
		return nil
	}
	return func(p JobParams) (*Job, error) {
		g, err := b(p)
		if err != nil {
			return nil, err
		}
		return &Job{Graph: g}, nil
	}
}

// validName reports whether a job or command name is usable on a command line.
func validName(name string) bool {
	return name != "" && !strings.HasPrefix(name, "-") && !strings.ContainsAny(name, " \t\n")
}

func (r *registry) addJob(name, description string, b JobBuilder) {
	if !validName(name) {
		panic(fmt.Sprintf("cli: invalid job name %q", name))
	}
	if b == nil {
		panic(fmt.Sprintf("cli: job %q has no builder", name))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.jobs[name]; dup {
		panic(fmt.Sprintf("cli: job %q registered twice", name))
	}
	r.jobs[name] = jobEntry{name: name, description: description, build: b}
}

func (r *registry) addCommand(name, usage, summary string, run CommandFunc) {
	if !validName(name) {
		panic(fmt.Sprintf("cli: invalid command name %q", name))
	}
	if run == nil {
		panic(fmt.Sprintf("cli: command %q has no function", name))
	}
	if builtinCommand(name) {
		panic(fmt.Sprintf("cli: command %q is built in", name))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.commands[name]; dup {
		panic(fmt.Sprintf("cli: command %q registered twice", name))
	}
	r.commands[name] = commandEntry{name: name, usage: usage, summary: summary, run: run}
}

// job finds a job by name.
func (r *registry) job(name string) (jobEntry, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	j, ok := r.jobs[name]
	return j, ok
}

// command finds an extra subcommand by name.
func (r *registry) command(name string) (commandEntry, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.commands[name]
	return c, ok
}

// jobList returns the jobs sorted by name.
func (r *registry) jobList() []jobEntry {
	r.mu.Lock()
	defer r.mu.Unlock()
	return sortedByName(r.jobs, func(j jobEntry) string { return j.name })
}

// commandList returns the extra subcommands sorted by name.
func (r *registry) commandList() []commandEntry {
	r.mu.Lock()
	defer r.mu.Unlock()
	return sortedByName(r.commands, func(c commandEntry) string { return c.name })
}

// sortedByName returns the values of m ordered by name.
func sortedByName[T any](m map[string]T, name func(T) string) []T {
	out := make([]T, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	slices.SortFunc(out, func(a, b T) int { return strings.Compare(name(a), name(b)) })
	return out
}

// jobNames is the sorted, comma-separated list of job names for messages.
func (r *registry) jobNames() string {
	var names []string
	for _, j := range r.jobList() {
		names = append(names, j.name)
	}
	if len(names) == 0 {
		return "none registered"
	}
	return strings.Join(names, ", ")
}
