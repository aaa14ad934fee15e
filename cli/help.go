package cli

import (
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// builtinCommands are the subcommands every node binary has, in help order.
var builtinCommands = []struct{ name, usage, summary string }{
	{"run", "JOB [flags]", "run a registered job in this process until its input ends"},
	{"start", "--id ID --workdir DIR [--nats URL | --embed-nats HOST:PORT]", "run a long-lived cluster node"},
	{"submit", "JOB [flags] [--detach]", "submit a job to the cluster and follow it to its end"},
	{"status", "[--json]", "list the cluster's nodes, jobs, task placement and checkpoints"},
	{"cancel", "JOB", "stop a job running on the cluster"},
	{"rescale", "JOB --operator NAME --parallelism N [--detach]", "change operators' parallelism while the job runs"},
	{"inspect", "[SUBJECT]", "print the cluster's messages decoded to JSON lines"},
	{"help", "[COMMAND]", "show this help (or a command's)"},
	{"version", "", "print the module version"},
}

// builtinCommand reports whether name is a built-in subcommand.
func builtinCommand(name string) bool {
	for _, c := range builtinCommands {
		if c.name == name {
			return true
		}
	}
	return false
}

// writeUsage writes the full help: commands, jobs and the flags of `node run`.
func (r *registry) writeUsage(w io.Writer) {
	fmt.Fprint(w, "node runs weir stream-processing jobs.\n\nUsage:\n  node COMMAND [arguments]\n\nCommands:\n")
	tw := tabwriter.NewWriter(w, 0, 0, 3, ' ', 0)
	for _, c := range builtinCommands {
		fmt.Fprintf(tw, "  %s\t%s\n", strings.TrimSpace(c.name+" "+c.usage), c.summary)
	}
	for _, c := range r.commandList() {
		fmt.Fprintf(tw, "  %s\t%s\n", strings.TrimSpace(c.name+" "+c.usage), c.summary)
	}
	tw.Flush()
	fmt.Fprintln(w)
	r.writeJobs(w)
	fmt.Fprintln(w)
	writeRunFlags(w)
}

// writeRunUsage writes the help of `node run`.
func (r *registry) writeRunUsage(w io.Writer) {
	fmt.Fprint(w, "Usage:\n  node run JOB [flags]\n\nRuns the job in this process until its input ends (or --duration passes,\nor the process is interrupted), then prints a summary.\n\n")
	r.writeJobs(w)
	fmt.Fprintln(w)
	writeRunFlags(w)
}

// writeJobs lists the registered jobs with their descriptions.
func (r *registry) writeJobs(w io.Writer) {
	fmt.Fprintln(w, "Jobs:")
	jobs := r.jobList()
	if len(jobs) == 0 {
		fmt.Fprintln(w, "  (none registered)")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 3, ' ', 0)
	for _, j := range jobs {
		fmt.Fprintf(tw, "  %s\t%s\n", j.name, j.description)
	}
	tw.Flush()
}

// writeRunFlags lists every flag of `node run` with its default.
func writeRunFlags(w io.Writer) {
	fmt.Fprintln(w, "Flags of node run:")
	var f runFlags
	fs := newRunFlagSet(&f)
	tw := tabwriter.NewWriter(w, 0, 0, 3, ' ', 0)
	fs.VisitAll(func(fl *flag.Flag) {
		arg, usage := flag.UnquoteUsage(fl)
		if arg != "" {
			arg = " " + arg
		}
		if def := fl.DefValue; def != "" && def != "0" && def != "0s" && def != "false" {
			usage += fmt.Sprintf(" (default %s)", def)
		}
		fmt.Fprintf(tw, "  --%s%s\t%s\n", fl.Name, arg, usage)
	})
	tw.Flush()
}
