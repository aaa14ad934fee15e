package cli

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/weirstream/weir"
)

// signalDumpWait bounds how long a SIGUSR1 dump waits for the actors.
const signalDumpWait = 5 * time.Second

// dumpOnSignal writes a dump of every job this process coordinates to w, one
// JSON object per line, each time the process receives SIGUSR1, until the
// returned stop is called.
func dumpOnSignal(w io.Writer) (stop func()) {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGUSR1)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-done:
				return
			case <-sig:
				ctx, cancel := context.WithTimeout(context.Background(), signalDumpWait)
				dumps := weir.DumpJobs(ctx)
				cancel()
				enc := json.NewEncoder(w)
				for _, d := range dumps {
					_ = enc.Encode(struct {
						Message string        `json:"message"`
						Dump    *weir.JobDump `json:"dump"`
					}{"state of the job's actors (SIGUSR1)", d})
				}
			}
		}
	}()
	return func() {
		signal.Stop(sig)
		close(done)
		wg.Wait()
	}
}
