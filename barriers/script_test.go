package barriers

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/weirstream/weir/internal/scripttest"
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
//	new inputs=N mode=aligned|unaligned [timeout=D] [consumed=a,b,...] [max=N] [limit=BYTES]
//	buffer in=I seq=S                          -> capture / - / error
//	bufferby in=I seq=S                        -> the checkpoints capturing it / - / error
//	buffers in=I from=S to=T                   -> the seqs captured
//	barrier in=I id=K last=S [overtook [bytes=B]] now=D  -> actions or error
//	blocked in=I bytes=B now=D                 -> data queued at a blocked input: actions
//	barrier in=I id=K last=S final now=D       -> a final barrier: actions or error
//	timeout id=K now=D                         -> actions
//	abort id=K                                 -> actions
//	inprogress                                 -> id or none
//	inflight                                   -> the ids in progress
//	rebuild consumed=a,b,...                   -> a new input set: ok or error
func TestScripts(t *testing.T) {
	scripttest.Run(t, "testdata/*.txt", func() scripttest.Runner {
		var a *Aligner
		return func(t *testing.T, c *scripttest.Command) []string { return runCommand(t, c, &a) }
	})
}

func runCommand(t *testing.T, c *scripttest.Command, ap **Aligner) []string {
	if c.Name != "new" && *ap == nil {
		c.Fatalf("before new")
	}
	a := *ap
	switch c.Name {
	case "new":
		cfg := Config{Inputs: c.Int("inputs"), AlignedTimeout: c.DurationOr("timeout", 0), ConsumedSeqs: c.Uint64ListOr("consumed"), MaxConcurrent: c.IntOr("max", 0),
			MaxInflightBytes: int64(c.IntOr("limit", 0))}
		switch mode := c.StringOr("mode", ""); mode {
		case "aligned":
			cfg.Mode = Aligned
		case "unaligned":
			cfg.Mode = Unaligned
		case "":
			// left unset: NewAligner rejects it
		default:
			c.Fatalf("mode=%q: want aligned or unaligned", mode)
		}
		na, err := NewAligner(cfg)
		if err != nil {
			return errLines(err)
		}
		*ap = na
		return []string{"ok"}
	case "buffer":
		capture, err := a.OnBuffer(c.Int("in"), c.Uint64("seq"))
		if err != nil {
			return errLines(err)
		}
		if capture {
			return []string{"capture"}
		}
		return []string{"-"}
	case "bufferby":
		capture, err := a.OnBuffer(c.Int("in"), c.Uint64("seq"))
		if err != nil {
			return errLines(err)
		}
		if capture {
			return []string{fmt.Sprintf("captured by %v", a.CapturedBy())}
		}
		return []string{"-"}
	case "inflight":
		return []string{fmt.Sprint(a.InProgressIDs())}
	case "holds":
		in := c.Int("in")
		var held []string
		for seq := c.Uint64("from"); seq <= c.Uint64("to"); seq++ {
			if a.Holds(in, seq) {
				held = append(held, strconv.FormatUint(seq, 10))
			}
		}
		return []string{"held [" + strings.Join(held, " ") + "]"}
	case "buffers":
		in := c.Int("in")
		var captured []string
		for seq := c.Uint64("from"); seq <= c.Uint64("to"); seq++ {
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
		in, id, last, now := c.Int("in"), c.Uint64("id"), c.Uint64("last"), c.DurationOr("now", 0)
		var acts []Action
		var err error
		switch {
		case c.Flag("final"):
			acts, err = a.OnFinalBarrier(in, id, last, now)
		case c.Flag("overtook") && c.Has("bytes"):
			acts, err = a.OnBarrierBytes(in, id, last, int64(c.Int("bytes")), now)
		default:
			acts, err = a.OnBarrier(in, id, last, c.Flag("overtook"), now)
		}
		if err != nil {
			return errLines(err)
		}
		return actionLines(acts)
	case "blocked":
		return actionLines(a.OnBlockedBytes(c.Int("in"), int64(c.Int("bytes")), c.DurationOr("now", 0)))
	case "timeout":
		return actionLines(a.OnTimeout(c.Uint64("id"), c.DurationOr("now", 0)))
	case "abort":
		return actionLines(a.Abort(c.Uint64("id")))
	case "rebuild":
		if err := a.Rebuild(c.Uint64ListOr("consumed")); err != nil {
			return errLines(err)
		}
		return []string{"ok"}
	case "inprogress":
		if id, ok := a.InProgress(); ok {
			return []string{strconv.FormatUint(id, 10)}
		}
		return []string{"none"}
	}
	c.Fatalf("unknown command")
	return nil
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
