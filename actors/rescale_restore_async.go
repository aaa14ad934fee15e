package actors

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/weirstream/weir/internal/plan"
)

// rescaleHandoffStagedMsg brings a handoff whose state was decoded off the
// task's goroutine back to its new owner.
type rescaleHandoffStagedMsg struct {
	priority
	m      *rescaleHandoffMsg
	staged plan.StagedGroups
	err    error
	since  time.Time // when the handoff arrived
}

// rescaleStageHandoff has the job's uploader decode the state a handoff
// brings, so that the new owner's other groups do not pause for it; the
// handoff goes to the rescale machine when the decoding comes back
// (rescaleHandoffStaged), as if it arrived then. It reports false, having
// done nothing, for a handoff without state, an instance that cannot stage
// groups or a job without an uploader (the state is then imported where
// the machine restores it). With the uploader's queue full the state is
// decoded here.
func (t *task) rescaleStageHandoff(ctx actor.Context, m *rescaleHandoffMsg) bool {
	st, ok := t.inst.(plan.GroupStager)
	if !ok || len(m.blobs) == 0 || t.rs.staged[m] != nil || t.job.uploads == nil {
		return false
	}
	t.rs.staging = append(t.rs.staging, m)
	self, root, since := ctx.Self(), ctx.ActorSystem().Root, time.Now()
	if err := t.job.transfers.submit(t.job.uploads, func(context.Context) {
		staged, err := st.StageGroups(m.groups, m.blobs)
		root.Send(self, &rescaleHandoffStagedMsg{m: m, staged: staged, err: err, since: since})
	}); err != nil {
		staged, err := st.StageGroups(m.groups, m.blobs)
		t.rescaleHandoffStaged(ctx, &rescaleHandoffStagedMsg{m: m, staged: staged, err: err, since: since})
	}
	return true
}

// rescaleHandoffStaged feeds a handoff whose state is decoded to the
// machine, or keeps it until the buffer in progress is processed. A
// decoding for an earlier incarnation of the task is ignored.
func (t *task) rescaleHandoffStaged(ctx actor.Context, s *rescaleHandoffStagedMsg) {
	i := -1
	if t.rs != nil {
		i = slices.Index(t.rs.staging, s.m)
	}
	if i < 0 {
		t.log.Debug().Ints("groups", s.m.groups).Msg("rescale: decoded handoff of an earlier incarnation ignored")
		return
	}
	t.rs.staging = slices.Delete(t.rs.staging, i, i+1)
	if s.err != nil {
		t.fail(fmt.Errorf("rescale: restore key groups %v from instance %d: %w", s.m.groups, s.m.from, s.err))
	}
	t.rs.staged[s.m] = s.staged
	t.log.Debug().Ints("groups", s.m.groups).Int("from", s.m.from).Dur("decoded_in", time.Since(s.since)).
		Msg("rescale: handed-off key groups decoded")
	t.rescaleTake(ctx, s.m)
}
