package actors

import (
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/weirstream/weir/internal/plan"
)

// restoreDecode is a restore whose key groups the instance left encoded
// (plan.LazyRestoring): the task runs while a goroutine of the instance
// decodes them, and records the restore's decoding time once they are
// installed.
type restoreDecode struct {
	lr         plan.LazyRestorer
	checkpoint uint64
	start      time.Time // the restore's start
	groups     int       // encoded when the task started running
}

// decodedMsg says the instance's goroutine decoded every key group the
// restore left encoded (or failed to decode one).
type decodedMsg struct{}

// encodedAfterRestore returns the instance's lazy restore and how many key
// groups it left encoded (0: none, or the instance restores eagerly).
func (t *task) encodedAfterRestore() (plan.LazyRestorer, int) {
	l, ok := t.inst.(plan.LazyRestoring)
	if !ok {
		return nil, 0
	}
	lr := l.LazyRestore()
	return lr, lr.Encoded()
}

// decodeInBackground starts decoding the key groups the restore of
// checkpoint ckpt, started at start, left encoded; the instance's goroutine
// tells the task when it is done.
func (t *task) decodeInBackground(ctx actor.Context, ckpt uint64, start time.Time) {
	lr, n := t.encodedAfterRestore()
	if n == 0 {
		return
	}
	root, self := ctx.ActorSystem().Root, ctx.Self()
	if !lr.DecodeInBackground(func() { root.Send(self, &decodedMsg{}) }) {
		return
	}
	t.decode = &restoreDecode{lr: lr, checkpoint: ckpt, start: start, groups: n}
}

// onDecoded installs the key groups the goroutine decoded: a group that
// failed to decode fails the task, naming it, as a restore's error does.
func (t *task) onDecoded() {
	d := t.decode
	if d == nil {
		return
	}
	t.decode = nil
	if err := d.lr.InstallDecoded(); err != nil {
		t.fail(fmt.Errorf("restore checkpoint %d, task %s, decode key groups: %w", d.checkpoint, t.name, err))
	}
	took := time.Since(d.start)
	t.job.restLog.decoded(t.name, d.start, took)
	t.log.Info().Uint64("checkpoint", d.checkpoint).Int("key_groups", d.groups).
		Float64("decoded_ms", float64(took.Microseconds())/1000).Msg("restored key groups all decoded")
}
