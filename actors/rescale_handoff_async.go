package actors

import (
	"context"
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/weirstream/weir/internal/plan"
)

// handoffInFlight is a handoff whose key groups are frozen and being encoded
// off the task's goroutine: the task goes on processing the groups that
// stay, and sends msg once the encoding comes back.
type handoffInFlight struct {
	to     int
	msg    *rescaleHandoffMsg // the set-aside records; blobs come with the encoding
	frozen plan.FrozenGroups
	since  time.Time // when the groups were frozen
}

// rescaleHandoffEncodedMsg brings a handoff's encoded state back to its task.
type rescaleHandoffEncodedMsg struct {
	priority
	h     *handoffInFlight
	blobs map[int][]byte
	err   error
}

// rescaleHandoffAsync freezes the groups of m and has the job's uploader
// encode them; it reports false, having done nothing, when the instance
// cannot freeze groups or the task must not go on without its handoff sent
// (a removed instance, whose groups all leave, stops after its handoff).
// With the uploader's queue full the groups are encoded here.
func (t *task) rescaleHandoffAsync(ctx actor.Context, to int, m *rescaleHandoffMsg) bool {
	fr, ok := t.inst.(plan.GroupFreezer)
	if !ok || t.rs.m.Config().Removed || t.job.uploads == nil {
		return false
	}
	start := time.Now()
	frozen, err := fr.FreezeGroups(m.groups)
	if err != nil {
		t.fail(fmt.Errorf("rescale: freeze key groups %v for their handoff: %w", m.groups, err))
	}
	h := &handoffInFlight{to: to, msg: m, frozen: frozen, since: start}
	t.rs.encoding = append(t.rs.encoding, h)
	t.log.Debug().Ints("groups", m.groups).Int("to", to).Dur("froze_in", time.Since(start)).
		Msg("rescale: key groups frozen for their handoff")
	self, root := ctx.Self(), ctx.ActorSystem().Root
	if err := t.job.transfers.submit(t.job.uploads, func(context.Context) {
		blobs, err := frozen.Encode()
		root.Send(self, &rescaleHandoffEncodedMsg{h: h, blobs: blobs, err: err})
	}); err != nil {
		blobs, err := frozen.Encode()
		t.rescaleHandoffEncoded(ctx, &rescaleHandoffEncodedMsg{h: h, blobs: blobs, err: err})
	}
	return true
}

// rescaleHandoffEncoded sends a handoff whose encoding came back and drops
// its groups here. An encoding for an earlier incarnation of the task (it
// restarted meanwhile, and its rescale with it) is ignored: its state is not
// this one's.
func (t *task) rescaleHandoffEncoded(ctx actor.Context, e *rescaleHandoffEncodedMsg) {
	i := -1
	if t.rs != nil {
		for k, h := range t.rs.encoding {
			if h == e.h {
				i = k
			}
		}
	}
	if i < 0 {
		t.log.Debug().Ints("groups", e.h.msg.groups).Msg("rescale: encoded handoff of an earlier incarnation ignored")
		return
	}
	t.rs.encoding = append(t.rs.encoding[:i], t.rs.encoding[i+1:]...)
	h := e.h
	h.frozen.Drop()
	if e.err != nil {
		t.fail(fmt.Errorf("rescale: hand off key groups %v: %w", h.msg.groups, e.err))
	}
	h.msg.blobs = e.blobs
	for _, b := range e.blobs {
		h.msg.bytes += int64(len(b))
	}
	t.log.Debug().Ints("groups", h.msg.groups).Int("to", h.to).Int64("bytes", h.msg.bytes).
		Dur("encoded_in", time.Since(h.since)).Msg("rescale: key groups handed off")
	t.rescaleSendHandoff(ctx, h.to, h.msg)
}
