package weir

import (
	"context"

	"github.com/weirstream/weir/actors"
)

// JobDump is the state of one job's actors: what each task does and what
// each channel holds, for finding where a job is stuck.
type JobDump = actors.JobDump

// DumpJobs dumps every job this process coordinates that is not done yet,
// waiting for the actors until ctx ends.
func DumpJobs(ctx context.Context) []*JobDump { return actors.DumpJobs(ctx) }
