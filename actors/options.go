package actors

import (
	"fmt"
	"time"
)

// Options tune how the runtime moves records.
type Options struct {
	// BatchSize is the most records in one buffer.
	BatchSize int
	// FlushInterval seals a partially filled buffer after this long.
	FlushInterval time.Duration
	// ChannelCapacity is C: the most buffers a channel holds, counting the ones
	// delivered to the consumer and not yet processed.
	ChannelCapacity int
	// DeliveryWindow is how many buffers a channel hands to its consumer ahead of
	// processing (at most ChannelCapacity).
	DeliveryWindow int
	// RescaleHoldBytes is a new owner's budget, in a live rescale, for the
	// records of moving key groups it holds until their state arrives (see
	// rescale.TaskConfig.HoldBytes): reaching it pauses the inputs that bring
	// more, which then stops every group on them.
	RescaleHoldBytes int64
	// Checkpoint turns checkpoints on (zero value: none).
	Checkpoint CheckpointOptions
	// Supervision says how failed regions restart (zero value: no restarts).
	Supervision SupervisionOptions
	// Cluster places tasks on other nodes (nil: all tasks on this node).
	Cluster *ClusterOptions
}

// DefaultOptions are the settings used when a field is zero.
func DefaultOptions() Options {
	return Options{BatchSize: 512, FlushInterval: 5 * time.Millisecond, ChannelCapacity: 8, DeliveryWindow: 2,
		RescaleHoldBytes: DefaultRescaleHoldBytes}
}

// DefaultRescaleHoldBytes is RescaleHoldBytes when not set: 64 MiB per
// instance, over 2 s of a handoff at a million 32-byte records a second,
// all of them held.
const DefaultRescaleHoldBytes = 64 << 20

// withDefaults fills zero fields and checks the rest.
func (o Options) withDefaults() (Options, error) {
	d := DefaultOptions()
	if o.BatchSize == 0 {
		o.BatchSize = d.BatchSize
	}
	if o.FlushInterval == 0 {
		o.FlushInterval = d.FlushInterval
	}
	if o.ChannelCapacity == 0 {
		o.ChannelCapacity = d.ChannelCapacity
	}
	if o.RescaleHoldBytes == 0 {
		o.RescaleHoldBytes = d.RescaleHoldBytes
	}
	if o.DeliveryWindow == 0 {
		o.DeliveryWindow = min(d.DeliveryWindow, o.ChannelCapacity)
	}
	switch {
	case o.BatchSize < 1:
		return o, fmt.Errorf("batch size %d must be at least 1", o.BatchSize)
	case o.FlushInterval < 0:
		return o, fmt.Errorf("flush interval %v must not be negative", o.FlushInterval)
	case o.ChannelCapacity < 1:
		return o, fmt.Errorf("channel capacity %d must be at least 1", o.ChannelCapacity)
	case o.RescaleHoldBytes < 0:
		return o, fmt.Errorf("rescale hold budget %d bytes must not be negative", o.RescaleHoldBytes)
	case o.DeliveryWindow < 1 || o.DeliveryWindow > o.ChannelCapacity:
		return o, fmt.Errorf("delivery window %d must be in [1, channel capacity %d]", o.DeliveryWindow, o.ChannelCapacity)
	}
	if err := o.Checkpoint.validate(); err != nil {
		return o, err
	}
	if err := o.Supervision.validate(); err != nil {
		return o, err
	}
	return o, nil
}
