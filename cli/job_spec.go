package cli

import (
	"errors"
	"flag"
	"fmt"

	"github.com/weirstream/weir"
	"github.com/weirstream/weir/cluster/node"
)

// jobSpec is a job named on a command line with its flags, built into a
// graph: what `node run` runs, and what every node of a cluster builds from
// the arguments `node submit` sent.
type jobSpec struct {
	entry jobEntry
	flags runFlags
	job   *Job
}

// parseJob parses `JOB [flags]` (flags may come before and after the job)
// and builds the job's graph. cmd names the command in errors. A request for
// help returns flag.ErrHelp. A job's own flags are parsed with the others;
// with env, flags the command line does not give are read from the
// environment (see EnvName).
func (r *registry) parseJob(cmd string, args []string, env bool) (*jobSpec, error) {
	spec := &jobSpec{}
	f := &spec.flags
	fs := newRunFlagSet(f)
	var jf *jobFlags
	if named, ok := r.findJob(args); ok {
		var err error
		if jf, err = declareJobFlags(fs, named); err != nil {
			return nil, err
		}
	}
	if env {
		if err := applyEnv(fs, r.getenv); err != nil {
			return nil, usagef("%s: %v", cmd, err)
		}
	}
	pos, err := parseInterleaved(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return nil, err
	}
	if err != nil {
		return nil, usagef("%s: %s (run 'node %s --help' for the flags)", cmd, doubleDash(err), cmd)
	}
	f.set = map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { f.set[fl.Name] = true })
	switch {
	case len(pos) == 0:
		return nil, usagef("%s: no job named (known: %s)", cmd, r.jobNames())
	case len(pos) > 1:
		return nil, usagef("%s: unexpected argument %q after job %q", cmd, pos[1], pos[0])
	}
	entry, ok := r.job(pos[0])
	if !ok {
		return nil, usagef("unknown job %q (known: %s)", pos[0], r.jobNames())
	}
	spec.entry = entry
	if err := f.finish(); err != nil {
		return nil, usagef("%s %s: %v", cmd, entry.name, err)
	}
	build := entry.build
	if jf != nil {
		if err := jf.syncShared(fs); err != nil {
			return nil, usagef("%s %s: %v", cmd, entry.name, err)
		}
		build = jf.build
	}
	job, err := build(f.params)
	if err != nil {
		return nil, usagef("%s %s: %v", cmd, entry.name, err)
	}
	if job == nil || job.Graph == nil {
		return nil, fmt.Errorf("%s %s: the job's builder returned no graph", cmd, entry.name)
	}
	if err := f.operators.checkOperators(job.Graph); err != nil {
		return nil, usagef("%s %s: %v", cmd, entry.name, err)
	}
	if err := f.rescale.checkOperators(job.Graph); err != nil {
		return nil, usagef("%s %s: %v", cmd, entry.name, err)
	}
	spec.job = job
	return spec, nil
}

// runConfig is the run configuration the flags describe (without logger).
func (f *runFlags) runConfig() weir.RunConfig {
	cfg := weir.RunConfig{Runtime: f.runtimeOptions(), Checkpoint: f.checkpointConfig(), Duration: f.duration, Restore: f.restore,
		OperatorParallelism: f.operators}
	sup := f.supervisionConfig()
	cfg.Supervision = &sup
	return cfg
}

// clusterJob builds a job a cluster node runs from the arguments `node
// submit` sent, as `node run` would parse them (a node.JobBuilder).
func (r *registry) clusterJob(name string, args []string) (*node.JobSpec, error) {
	spec, err := r.parseJob("submit", append([]string{name}, args...), false)
	if err != nil {
		return nil, err
	}
	return &node.JobSpec{Graph: spec.job.Graph, Run: spec.flags.runConfig(), Out: spec.flags.params.Out}, nil
}
