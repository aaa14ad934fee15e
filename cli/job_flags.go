package cli

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

// FlagsJob declares a job's own flags on fs and returns the job's builder,
// which reads them once the command line is parsed. A job's flags must not
// reuse a name of `node run`'s (except --nats, shared with `node submit`'s
// connection flag: the job then reads the same URL).
type FlagsJob func(fs *flag.FlagSet) JobBuilder

// RegisterWithFlags adds a job that declares its own flags (panics on
// duplicates: programming error).
func RegisterWithFlags(name, description string, declare FlagsJob) {
	defaultRegistry.addFlagsJob(name, description, declare)
}

func (r *registry) addFlagsJob(name, description string, declare FlagsJob) {
	if declare == nil {
		panic(fmt.Sprintf("cli: job %q has no flag declaration", name))
	}
	r.addJob(name, description, func(JobParams) (*Job, error) {
		return nil, fmt.Errorf("job %q reads its own flags: build it through the command line", name)
	})
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.jobs[name]
	e.declare = declare
	r.jobs[name] = e
}

// EnvPrefix starts the environment variable of every flag of `node run`,
// `node submit` and the jobs: --checkpoint-interval is read from
// WEIR_CHECKPOINT_INTERVAL when the command line does not give it.
const EnvPrefix = "WEIR_"

// natsURLEnv is read for --nats, as the NATS command-line tool does.
const natsURLEnv = "NATS_URL"

// EnvName is the environment variable read for flag name: NATS_URL for
// "nats", else WEIR_ and the name in upper case with '-' as '_'.
func EnvName(name string) string {
	if name == "nats" {
		return natsURLEnv
	}
	return EnvPrefix + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// applyEnv sets every flag of fs whose environment variable is set (before
// the command line is parsed, so a flag given there wins: flag > env >
// default). A value the flag refuses is an error naming the variable.
func applyEnv(fs *flag.FlagSet, getenv func(string) string) error {
	var err error
	fs.VisitAll(func(fl *flag.Flag) {
		if err != nil {
			return
		}
		name := EnvName(fl.Name)
		v := getenv(name)
		if v == "" {
			return
		}
		if serr := fs.Set(fl.Name, v); serr != nil {
			err = fmt.Errorf("environment %s=%q (for --%s): %v", name, v, fl.Name, serr)
		}
	})
	return err
}

// jobFlags are a job's own flags, declared on the command's flag set.
type jobFlags struct {
	build  JobBuilder
	own    *flag.FlagSet
	names  map[string]bool // every flag of the job's
	shared []string        // the job's flags the command already had (--nats)
}

// declareJobFlags declares job's own flags on fs; nil for a job without.
func declareJobFlags(fs *flag.FlagSet, job jobEntry) (*jobFlags, error) {
	if job.declare == nil {
		return nil, nil
	}
	jf := &jobFlags{own: flag.NewFlagSet(job.name, flag.ContinueOnError), names: map[string]bool{}}
	jf.build = job.declare(jf.own)
	var err error
	jf.own.VisitAll(func(fl *flag.Flag) {
		jf.names[fl.Name] = true
		switch {
		case fs.Lookup(fl.Name) == nil:
			fs.Var(fl.Value, fl.Name, fl.Usage)
		case fl.Name == "nats":
			jf.shared = append(jf.shared, fl.Name)
		case err == nil:
			err = fmt.Errorf("job %s: its flag --%s is already a flag of node", job.name, fl.Name)
		}
	})
	if err == nil && jf.build == nil {
		err = fmt.Errorf("job %s: its flag declaration returned no builder", job.name)
	}
	return jf, err
}

// syncShared hands the job the values fs parsed for the flags it shares.
func (jf *jobFlags) syncShared(fs *flag.FlagSet) error {
	for _, name := range jf.shared {
		if err := jf.own.Set(name, fs.Lookup(name).Value.String()); err != nil {
			return fmt.Errorf("--%s: %w", name, err)
		}
	}
	return nil
}

// writeJobFlags lists a job's own flags (nothing for a job without).
func writeJobFlags(w io.Writer, job jobEntry) {
	if job.declare == nil {
		return
	}
	own := flag.NewFlagSet(job.name, flag.ContinueOnError)
	job.declare(own)
	fmt.Fprintf(w, "\nFlags of job %s:\n", job.name)
	own.SetOutput(w)
	own.PrintDefaults()
}

// findJob is the registered job named among args (the first argument that
// is a job's name), if any.
func (r *registry) findJob(args []string) (jobEntry, bool) {
	for _, a := range args {
		if a == "--" {
			continue
		}
		if e, ok := r.job(a); ok {
			return e, true
		}
	}
	return jobEntry{}, false
}

// getenv reads the environment the registry's commands see.
func (r *registry) getenv(name string) string {
	if r.env != nil {
		return r.env(name)
	}
	return os.Getenv(name)
}
