package barriers

import (
	"errors"
	"github.com/weirstream/weir/internal/scripttest"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A script in testdata/*.txt is a list of blocks separated by blank lines:
//
//	# comments
//	command key=value ...
//	----
//	expected output, one line per action
//
// Commands:
//
//	new inputs=N mode=aligned|unaligned [timeout=D] [consumed=a,b,...]
//	buffer in=I seq=S                          -> capture / - / error
//	buffers in=I from=S to=T                   -> the seqs captured
//	barrier in=I id=K last=S [overtook] now=D  -> actions or error
//	barrier in=I id=K last=S final now=D       -> a final barrier: actions or error
//	timeout id=K now=D                         -> actions
//	abort id=K                                 -> actions
//	inprogress                                 -> id or none
//	rebuild consumed=a,b,...                   -> a new input set: ok or error
func TestScripts(t *testing.T) {
	scripttest.Run(t, "testdata/*.txt", func() scripttest.Runner {
		var a *Aligner
		return func(t *testing.T, where, cmd string) []string { return runCommand(t, where, cmd, &a) }
	})
}

// scriptArgs parses key=value words (a bare word is a true flag).
type scriptArgs map[string]string

func (s scriptArgs) int(t *testing.T, where, k string) int {
	v, err := strconv.Atoi(s[k])
	if err != nil {
		t.Fatalf("%s: %s=%q: %v", where, k, s[k], err)
	}
	return v
}

func (s scriptArgs) u64(t *testing.T, where, k string) uint64 {
	v, err := strconv.ParseUint(s[k], 10, 64)
	if err != nil {
		t.Fatalf("%s: %s=%q: %v", where, k, s[k], err)
	}
	return v
}

func (s scriptArgs) dur(t *testing.T, where, k string) time.Duration {
	if s[k] == "" {
		return 0
	}
	v, err := time.ParseDuration(s[k])
	if err != nil {
		t.Fatalf("%s: %s=%q: %v", where, k, s[k], err)
	}
	return v
}

func runCommand(t *testing.T, where, cmd string, ap **Aligner) []string {
	words := strings.Fields(cmd)
	args := scriptArgs{}
	for _, w := range words[1:] {
		k, v, ok := strings.Cut(w, "=")
		if !ok {
			v = "true"
		}
		args[k] = v
	}
	if words[0] != "new" && *ap == nil {
		t.Fatalf("%s: %s before new", where, words[0])
	}
	a := *ap
	switch words[0] {
	case "new":
		cfg := Config{Inputs: args.int(t, where, "inputs"), AlignedTimeout: args.dur(t, where, "timeout")}
		switch args["mode"] {
		case "aligned":
			cfg.Mode = Aligned
		case "unaligned":
			cfg.Mode = Unaligned
		}
		cfg.ConsumedSeqs = args.seqs(t, where, "consumed")
		na, err := NewAligner(cfg)
		if err != nil {
			return errLines(err)
		}
		*ap = na
		return []string{"ok"}
	case "buffer":
		capture, err := a.OnBuffer(args.int(t, where, "in"), args.u64(t, where, "seq"))
		if err != nil {
			return errLines(err)
		}
		if capture {
			return []string{"capture"}
		}
		return []string{"-"}
	case "buffers":
		in := args.int(t, where, "in")
		var captured []string
		for seq := args.u64(t, where, "from"); seq <= args.u64(t, where, "to"); seq++ {
			capture, err := a.OnBuffer(in, seq)
			if err != nil {
				return errLines(err)
			}
			if capture {
				captured = append(captured, strconv.FormatUint(seq, 10))
			}
		}
		return []string{"captured [" + strings.Join(captured, " ") + "]"}
	case "barrier":
		in, id, last, now := args.int(t, where, "in"), args.u64(t, where, "id"), args.u64(t, where, "last"), args.dur(t, where, "now")
		var acts []Action
		var err error
		if args["final"] == "true" {
			acts, err = a.OnFinalBarrier(in, id, last, now)
		} else {
			acts, err = a.OnBarrier(in, id, last, args["overtook"] == "true", now)
		}
		if err != nil {
			return errLines(err)
		}
		return actionLines(acts)
	case "timeout":
		return actionLines(a.OnTimeout(args.u64(t, where, "id"), args.dur(t, where, "now")))
	case "abort":
		return actionLines(a.Abort(args.u64(t, where, "id")))
	case "rebuild":
		if err := a.Rebuild(args.seqs(t, where, "consumed")); err != nil {
			return errLines(err)
		}
		return []string{"ok"}
	case "inprogress":
		if id, ok := a.InProgress(); ok {
			return []string{strconv.FormatUint(id, 10)}
		}
		return []string{"none"}
	}
	t.Fatalf("%s: unknown command %q", where, words[0])
	return nil
}

// seqs parses k's comma-separated seqs (none when unset).
func (s scriptArgs) seqs(t *testing.T, where, k string) []uint64 {
	var seqs []uint64
	if c := s[k]; c != "" {
		for _, f := range strings.Split(c, ",") {
			v, err := strconv.ParseUint(f, 10, 64)
			if err != nil {
				t.Fatalf("%s: %s: %v", where, k, err)
			}
			seqs = append(seqs, v)
		}
	}
	return seqs
}

func errLines(err error) []string {
	class := "error"
	switch {
	case errors.Is(err, ErrProtocol):
		class = "protocol error"
	case errors.Is(err, ErrInvalidConfig):
		class = "config error"
	}
	return []string{class + ": " + err.Error()}
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
