package coord

import (
	"fmt"
	"time"
)

// Kind is what an Action asks the agent's shell to do.
type Kind int

// The actions of the core.
const (
	// NodeJoined: Node is alive (new, back after being declared dead, or a
	// new incarnation): tell the transport it may send to it again.
	NodeJoined Kind = iota + 1
	// NodeLost: Node's tasks are gone and go elsewhere (Reason: Silent,
	// ConnectionClosed, leaving, or did not return within the local wait):
	// tell the transport and every job coordinated here.
	NodeLost
	// ScanJobs: list the job registry and hand the records to JobRecords.
	ScanJobs
	// Acquire: try to take Job's coordinator lease (to adopt the orphaned
	// job; Reason names its old coordinator) and hand the result to
	// LeaseAcquired. With Node set, the old coordinator's connection
	// closed: a lease Node still holds is taken over without waiting for
	// it to expire (the new epoch fences Node).
	Acquire
	// Drop: stop setting Job up here (another node won its lease: Reason).
	Drop
	// Coordinate: this node holds Job's lease at Epoch: deploy the job.
	Coordinate
	// Renew: renew Job's lease and hand the result to LeaseRenewed.
	Renew
	// Abandon: stop coordinating Job without recording its end (its lease
	// was lost: another node coordinates it now).
	Abandon
	// Wait: Job does not fit yet (or the node is still learning the
	// membership, Reason says which): try placing it again After.
	Wait
	// Place: try placing Job now and hand the result to Placed.
	Place
	// GiveUp: setting Job up failed with Err: stop and hand Err to
	// SetUpFailed.
	GiveUp
	// Prepare: ask Node to prepare its part of Job.
	Prepare
	// Deploy: every node is prepared; start Job's coordinator.
	Deploy
	// Fail: setting Job up failed with Err; record it and release the lease.
	Fail
	// Forget: stop renewing Job's lease without releasing it and leave its
	// record to the next coordinator (Err says why, when there is one).
	Forget
	// Record: Job ended here; record its end, release its lease, then
	// Unclaim it.
	Record
	// HandOver: the node leaves: abandon Job, wait for it to stop, release
	// its lease.
	HandOver
	// AnnounceLeaving: tell the other nodes this node leaves.
	AnnounceLeaving
	// EndParts: stop this node's parts of jobs.
	EndParts
	// AwaitNode: Node was declared dead (Reason: Silent or
	// ConnectionClosed); the tasks it ran wait for it to return
	// (with its working directory and their local state) for at most After
	// before they are placed elsewhere (--local-wait).
	AwaitNode
	// NodeBack: Node returned (a new incarnation, or the same one after
	// being declared dead) while its tasks were not yet placed elsewhere:
	// they are lost, and go back to it (Reason says after how long).
	NodeBack
)

var kindNames = [...]string{"", "node-joined", "node-lost", "scan-jobs", "acquire", "drop", "coordinate", "renew", "abandon",
	"wait", "place", "give-up", "prepare", "deploy", "fail", "forget", "record", "hand-over", "announce-leaving", "end-parts", "await-node", "node-back"}

// String names the kind as the scripts do.
func (k Kind) String() string {
	if k > 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", int(k))
}

// Action is one thing the core asks the shell to do.
type Action struct {
	Kind   Kind
	Node   string
	Job    string
	Reason string
	Epoch  uint64
	After  time.Duration
	Err    error
	// Attempt is, on the step after a placement, how many tries it took.
	Attempt int
}

// String renders the action as the scripts do.
func (a Action) String() string {
	s := a.Kind.String()
	if a.Job != "" {
		s += " job=" + a.Job
	}
	if a.Node != "" {
		s += " node=" + a.Node
	}
	if a.Epoch != 0 {
		s += fmt.Sprintf(" epoch=%d", a.Epoch)
	}
	if a.After != 0 {
		s += " after=" + a.After.String()
	}
	if a.Attempt > 1 {
		s += fmt.Sprintf(" attempts=%d", a.Attempt)
	}
	if a.Reason != "" {
		s += fmt.Sprintf(" reason=%q", a.Reason)
	}
	if a.Err != nil {
		s += fmt.Sprintf(" err=%q", a.Err.Error())
	}
	return s
}
