package actors

import (
	"context"
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/weirstream/weir/actors/mailbox"
)

// JobDump is the state of a job's actors at one moment, for finding out why a
// job makes no progress. Each actor reports its own part when asked with a
// priority message, so a dump costs the job nothing until it is taken; an
// actor that does not answer in time (blocked in an operator, or stopped) is
// listed as not answering.
type JobDump struct {
	Job         string           `json:"job"`
	At          time.Time        `json:"at"`
	Coordinator *CoordinatorDump `json:"coordinator"` // nil: the coordinator did not answer
	Tasks       []TaskDump       `json:"tasks"`
}

// CoordinatorDump is the job actor's part: deployment, the pending checkpoint
// and the regions' restart states.
type CoordinatorDump struct {
	Tasks    int  `json:"tasks"`
	Ready    int  `json:"ready"`
	Finished int  `json:"finished"`
	Wired    bool `json:"wired"`
	Draining bool `json:"draining"`
	Ended    bool `json:"ended"`
	// PendingCheckpoint is the checkpoint in progress (0: none) and Acks the
	// tasks that acknowledged it.
	PendingCheckpoint uint64 `json:"pending_checkpoint,omitempty"`
	Acks              int    `json:"acks"`
	// WritingManifest is the checkpoint whose manifest is being written (0: none).
	WritingManifest uint64          `json:"writing_manifest,omitempty"`
	LastCompleted   uint64          `json:"last_completed,omitempty"`
	FinalDone       bool            `json:"final_done"`
	IdleSources     int             `json:"idle_sources"`
	Regions         []RegionDump    `json:"regions,omitempty"`
	Mailbox         mailbox.Lengths `json:"mailbox"`
}

// RegionDump is one failover region's restart state.
type RegionDump struct {
	Region int    `json:"region"`
	State  string `json:"state"` // running, stopped or restoring
	// Alive counts stopped tasks not yet gone; Readying restarted tasks not
	// yet ready.
	Alive      int  `json:"alive"`
	Readying   int  `json:"readying"`
	RestartDue bool `json:"restart_due"`
}

// Task phases in a dump.
const (
	PhaseRunning      = "running"
	PhaseBlocked      = "blocked on credit"
	PhaseReplaying    = "replaying restored channel state"
	PhaseAligning     = "aligning checkpoint"
	PhaseCapturing    = "capturing checkpoint"
	PhaseSourceIdle   = "source idle, waiting for the final checkpoint"
	PhaseNotStarted   = "not started"
	PhaseFinishing    = "finishing"
	PhaseFinished     = "finished"
	PhaseNotAnswering = "not answering"
	PhaseRemote       = "on another node"
	PhaseStopped      = "stopped, waiting for its restart"
)

// TaskDump is one task's part, with its input channels.
type TaskDump struct {
	Task  string `json:"task"`
	Gen   int    `json:"gen"`
	Phase string `json:"phase"`
	// Checkpoint is the checkpoint the task is aligning or capturing (0: none).
	Checkpoint uint64          `json:"checkpoint,omitempty"`
	Inputs     []InputDump     `json:"inputs,omitempty"`
	Outputs    []OutputDump    `json:"outputs,omitempty"`
	Mailbox    mailbox.Lengths `json:"mailbox"`
	// RecordsIn and RecordsOut count this incarnation's records taken and
	// emitted (a restart starts them again at 0).
	RecordsIn  int64 `json:"records_in"`
	RecordsOut int64 `json:"records_out"`
}

// InputDump is one input of a task: the task's side and its channel actor.
type InputDump struct {
	Input int `json:"input"`
	// Pending buffers were delivered and not processed; Replay buffers of
	// restored channel state are not processed yet.
	Pending int `json:"pending"`
	Replay  int `json:"replay"`
	// HeldBarrier is an in-order barrier waiting for the data before it (0: none).
	HeldBarrier uint64       `json:"held_barrier,omitempty"`
	Ended       bool         `json:"ended"`
	Channel     *ChannelDump `json:"channel"` // nil: the channel did not answer
}

// ChannelDump is a channel actor's state.
type ChannelDump struct {
	Channel string `json:"channel"`
	// Queued buffers wait to be delivered; Unacked were delivered and not
	// processed; Credit is what the producer may still send.
	Queued   int    `json:"queued"`
	Unacked  int    `json:"unacked"`
	Credit   int    `json:"credit"`
	Received uint64 `json:"received"`
	// Delivered is the seq of the last buffer handed to the consumer.
	Delivered uint64 `json:"delivered"`
	// Blocked: an in-order barrier was delivered and the consumer has not
	// unblocked the channel; Barriers are in-order barriers not delivered yet.
	Blocked  bool            `json:"blocked"`
	Barriers []uint64        `json:"barriers,omitempty"`
	EOS      bool            `json:"eos"`
	Mailbox  mailbox.Lengths `json:"mailbox"`
}

// OutputDump is one output channel of a task.
type OutputDump struct {
	Edge    int  `json:"edge"`
	Channel int  `json:"channel"`
	Credit  int  `json:"credit"`
	Outbox  int  `json:"outbox"`
	Ended   bool `json:"ended"`
}

// Busy reports whether the dump shows work waiting somewhere: data queued in
// a mailbox, channel, input or outbox, a checkpoint or restart in progress,
// or an actor that does not answer. A job that makes no progress while busy
// is stalled; one that is not busy is only idle.
func (d *JobDump) Busy() bool {
	c := d.Coordinator
	if c == nil || c.PendingCheckpoint != 0 || c.WritingManifest != 0 || c.Mailbox.Normal > 0 {
		return true
	}
	for _, r := range c.Regions {
		if r.State != "running" {
			return true
		}
	}
	for _, t := range d.Tasks {
		if t.Phase == PhaseNotAnswering || t.Mailbox.Normal > 0 || t.Checkpoint != 0 {
			return true
		}
		for _, o := range t.Outputs {
			if o.Outbox > 0 {
				return true
			}
		}
		for _, in := range t.Inputs {
			ch := in.Channel
			if in.Pending > 0 || in.Replay > 0 || in.HeldBarrier != 0 || ch == nil ||
				ch.Queued > 0 || ch.Unacked > 0 || ch.Blocked || len(ch.Barriers) > 0 {
				return true
			}
		}
	}
	return false
}

// dumpTarget is a task to ask, with its input channels.
type dumpTarget struct {
	name    string
	pid     *actor.PID // nil: on another node, or stopped
	stopped bool       // stopped for a restart of its region
	inputs  []*actor.PID
}

// Dump asks the job's coordinator, tasks and channels for their state and
// returns what they answered before ctx ended.
func (j *Job) Dump(ctx context.Context) (*JobDump, error) {
	j.mu.Lock()
	pid := j.pid
	j.mu.Unlock()
	if pid == nil {
		return nil, fmt.Errorf("dump job %q: it has no coordinator", j.Plan.Name)
	}
	root := j.node.system.Root
	ask := &dumpJobMsg{reply: make(chan dumpJobReply, 1)}
	root.Send(pid, ask)
	d := &JobDump{Job: j.Plan.Name, At: time.Now()}
	var targets []dumpTarget
	select {
	case r := <-ask.reply:
		d.Coordinator, targets = &r.coord, r.targets
	case <-ctx.Done():
		return d, nil
	}
	// Ask everyone at once, then collect.
	type pendingTask struct {
		task  chan TaskDump
		chans []chan ChannelDump
	}
	asked := make([]pendingTask, len(targets))
	for i, tg := range targets {
		if tg.pid == nil {
			continue
		}
		asked[i].task = make(chan TaskDump, 1)
		root.Send(tg.pid, &dumpTaskMsg{reply: asked[i].task})
		for _, ch := range tg.inputs {
			c := make(chan ChannelDump, 1)
			asked[i].chans = append(asked[i].chans, c)
			if ch != nil {
				root.Send(ch, &dumpChannelMsg{reply: c})
			}
		}
	}
	for i, tg := range targets {
		td := TaskDump{Task: tg.name, Phase: PhaseRemote}
		if tg.stopped {
			td.Phase = PhaseStopped
		}
		if tg.pid != nil {
			td.Phase = PhaseNotAnswering
			select {
			case td = <-asked[i].task:
			case <-ctx.Done():
			}
			if len(td.Inputs) == 0 { // not answering: list the channels alone
				td.Inputs = make([]InputDump, len(asked[i].chans))
				for k := range td.Inputs {
					td.Inputs[k].Input = k
				}
			}
			for k, c := range asked[i].chans {
				if k >= len(td.Inputs) {
					break
				}
				select {
				case cd := <-c:
					td.Inputs[k].Channel = &cd
				case <-ctx.Done():
				}
			}
		}
		d.Tasks = append(d.Tasks, td)
	}
	return d, nil
}
