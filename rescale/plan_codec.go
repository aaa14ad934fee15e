package rescale

import (
	"bytes"
	"fmt"

	"github.com/rs/zerolog"
	"github.com/vmihailenco/msgpack/v5"
)

// Encode returns the plan as msgpack, to be logged or stored.
func (p *Plan) Encode() ([]byte, error) {
	b, err := marshal(p)
	if err != nil {
		return nil, fmt.Errorf("encode rescale plan %d: %w", p.Input.Seq, err)
	}
	return b, nil
}

// marshal encodes p with map keys sorted, so equal plans encode to equal
// bytes.
func marshal(p *Plan) ([]byte, error) {
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.SetSortMapKeys(true)
	if err := enc.Encode(p); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// DecodePlan reads a plan written by Encode and replays it (see Replay): a
// plan that its own input does not reproduce is refused.
func DecodePlan(b []byte) (*Plan, error) {
	var p Plan
	if err := msgpack.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("decode rescale plan: %w", err)
	}
	if err := p.Replay(); err != nil {
		return nil, err
	}
	return &p, nil
}

// Replay computes the plan again from its Input and reports an error unless
// the result is the same plan.
func (p *Plan) Replay() error {
	again, err := NewPlan(p.Input)
	if err != nil {
		return fmt.Errorf("replay rescale plan %d: %w", p.Input.Seq, err)
	}
	a, err := marshal(again)
	if err != nil {
		return fmt.Errorf("replay rescale plan %d: %w", p.Input.Seq, err)
	}
	b, err := marshal(p)
	if err != nil {
		return fmt.Errorf("replay rescale plan %d: %w", p.Input.Seq, err)
	}
	if !bytes.Equal(a, b) {
		return fmt.Errorf("replay rescale plan %d: its input gives a different plan (%s)", p.Input.Seq, again.Summary())
	}
	return nil
}

// Summary is the plan in one line: each operator's from→to and moves.
func (p *Plan) Summary() string {
	var b bytes.Buffer
	for i, c := range p.Changes {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %d→%d", c.Operator, c.From, c.To)
		if c.New != nil {
			fmt.Fprintf(&b, " moves %d of %d (min %d)", len(c.Moves), len(c.Old.Owners), c.Minimum)
		}
	}
	return b.String()
}

// MarshalZerologObject logs the plan's sequence number, changes and figures
// (the job is the logger's).
func (p *Plan) MarshalZerologObject(e *zerolog.Event) {
	e.Uint64("rescale", p.Input.Seq).Str("changes", p.Summary()).
		Int("moved", p.Moved()).Int("min_moves", p.Minimum())
	if len(p.Placement) > 0 {
		arr := zerolog.Arr()
		for _, pl := range p.Placement {
			arr.Str(fmt.Sprintf("%s[%d]@%s", pl.Operator, pl.Instance, pl.Node))
		}
		e.Array("placed", arr)
	}
}
