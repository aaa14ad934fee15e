package actors

import (
	"fmt"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/rescale"
)

// rescaleStagedMsg carries what a removed instance of a two-phase sink
// staged and has not committed to the instance that takes it over
// (rescale.HandStaged): state is the sink's HandOff.
type rescaleStagedMsg struct {
	priority
	from  int
	state []byte
}

// rescaleHandStaged sends everything this removed sink instance staged and
// has not committed to instance a.To. It has written its last record: the
// machine hands off only once every buffer sent to it is processed.
func (t *task) rescaleHandStaged(ctx actor.Context, a rescale.HandStaged) {
	rs := t.rs
	if a.To < 0 || a.To >= len(rs.peers) || rs.peers[a.To] == nil {
		t.fail(fmt.Errorf("rescale: hand staged output to instance %d, which is not running", a.To))
	}
	h, ok := t.inst.(plan.StagedHandoff)
	if !ok || !h.HandsOff() {
		t.fail(fmt.Errorf("rescale: sink instance %T cannot hand its staged output off", t.inst))
	}
	state, err := h.HandOffStaged()
	if err != nil {
		t.fail(fmt.Errorf("rescale: hand staged output to instance %d: %w", a.To, err))
	}
	t.log.Info().Int("to", a.To).Int("bytes", len(state)).Msg("rescale: staged output handed off")
	ctx.Send(rs.peers[a.To], &rescaleStagedMsg{from: t.instance, state: state})
}

// rescaleTakeStaged adopts the staged output that the message being
// carried out brought.
func (t *task) rescaleTakeStaged(a rescale.TakeStaged) {
	m := t.rs.stagedIn
	if m == nil || m.from != a.From {
		t.fail(fmt.Errorf("rescale: take over staged output of instance %d without its message", a.From))
	}
	h, ok := t.inst.(plan.StagedHandoff)
	if !ok || !h.HandsOff() {
		t.fail(fmt.Errorf("rescale: sink instance %T cannot take staged output over", t.inst))
	}
	if err := h.TakeOverStaged(m.state); err != nil {
		t.fail(fmt.Errorf("rescale: take over staged output of instance %d: %w", a.From, err))
	}
	t.log.Info().Int("from", a.From).Int("bytes", len(m.state)).Msg("rescale: staged output taken over")
}
