// Package cli is the command line of a weir node binary. Programs register their
// jobs (graphs) with Register and hand the command line to Main, so a user's own
// node binary is a main package of a few lines:
//
//	func main() {
//		cli.Register("mycount", "my keyed count", buildMyCount)
//		os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr))
//	}
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
)

// Exit codes of Main.
const (
	// ExitOK means the command succeeded.
	ExitOK = 0
	// ExitFailure means the job (or command) failed.
	ExitFailure = 1
	// ExitUsage means the command line was wrong: unknown command or job, bad flag.
	ExitUsage = 2
)

// modulePath is reported by `node version` when build info is missing.
const modulePath = "github.com/weirstream/weir"

// Main runs the command line (os.Args without the program name) and returns the
// exit code. SIGINT and SIGTERM stop a running job: it takes a stop checkpoint
// of what is in flight (or, with --drain, ends its sources and drains) and
// reports. A second signal ends the process at once (its default action),
// leaving the last completed checkpoint.
func Main(args []string, stdout, stderr io.Writer) int {
	ctx, release := onFirstSignal(stopSignals...)
	defer release()
	return MainContext(ctx, args, stdout, stderr)
}

// MainContext is Main with a context whose end stops a running job.
func MainContext(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return defaultRegistry.main(ctx, args, stdout, stderr)
}

// usageError is a mistake on the command line (exit code 2).
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// usagef makes a usageError.
func usagef(format string, a ...any) error { return &usageError{msg: fmt.Sprintf(format, a...)} }

// exitCode reports err on stderr as one line and returns its exit code.
func exitCode(stderr io.Writer, err error) int {
	if err == nil {
		return ExitOK
	}
	fmt.Fprintf(stderr, "node: %v\n", err)
	var ue *usageError
	if errors.As(err, &ue) {
		return ExitUsage
	}
	return ExitFailure
}

// main dispatches to the subcommand.
func (r *registry) main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		r.writeUsage(stderr)
		return exitCode(stderr, usagef("no command given"))
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "-h", "-help", "--help", "help":
		return r.help(rest, stdout, stderr)
	case "version", "--version":
		if len(rest) > 0 {
			return exitCode(stderr, usagef("version: unexpected argument %q", rest[0]))
		}
		fmt.Fprintln(stdout, versionLine())
		return ExitOK
	case "run":
		return exitCode(stderr, r.run(ctx, rest, stdout, stderr))
	case "start":
		return exitCode(stderr, r.start(ctx, rest, stdout, stderr))
	case "submit":
		return exitCode(stderr, r.submit(ctx, rest, stdout, stderr))
	case "status":
		return exitCode(stderr, r.status(ctx, rest, stdout, stderr))
	case "cancel":
		return exitCode(stderr, r.cancel(ctx, rest, stdout, stderr))
	case "rescale":
		return exitCode(stderr, r.rescaleCmd(ctx, rest, stdout, stderr))
	case "inspect":
		return exitCode(stderr, r.inspect(ctx, rest, stdout, stderr))
	}
	if c, ok := r.command(cmd); ok {
		return c.run(ctx, rest, stdout, stderr)
	}
	return exitCode(stderr, usagef("unknown command %q (run 'node help' for the list)", cmd))
}

// help prints the full help, or one command's.
func (r *registry) help(args []string, stdout, stderr io.Writer) int {
	switch {
	case len(args) == 0:
		r.writeUsage(stdout)
		return ExitOK
	case len(args) > 1:
		return exitCode(stderr, usagef("help: unexpected argument %q", args[1]))
	case args[0] == "run":
		r.writeRunUsage(stdout)
		return ExitOK
	case args[0] == "start" || args[0] == "submit" || args[0] == "status" || args[0] == "cancel" || args[0] == "rescale" || args[0] == "inspect":
		return r.main(context.Background(), []string{args[0], "--help"}, stdout, stderr)
	case builtinCommand(args[0]):
		r.writeUsage(stdout)
		return ExitOK
	}
	if c, ok := r.command(args[0]); ok {
		return c.run(context.Background(), []string{"--help"}, stdout, stderr)
	}
	return exitCode(stderr, usagef("help: unknown command %q", args[0]))
}

// versionLine is what `node version` prints: module path, version and, when
// the binary was built from a repository, the revision.
func versionLine() string {
	path, version, rev, dirty := modulePath, "(devel)", "", false
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Path != "" {
			path = bi.Main.Path
		}
		if bi.Main.Version != "" {
			version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		line := fmt.Sprintf("node %s %s %s", path, version, bi.GoVersion)
		if rev != "" {
			if len(rev) > 12 {
				rev = rev[:12]
			}
			line += " rev " + rev
			if dirty {
				line += "+dirty"
			}
		}
		return line
	}
	return fmt.Sprintf("node %s %s", path, version)
}
