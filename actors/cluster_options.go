package actors

import (
	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/rescale"
)

// ClusterOptions let a job's coordinator place tasks on other nodes.
type ClusterOptions struct {
	// Place picks the node a task instance runs on. It is asked at deploy and
	// again at every restart, so it can avoid nodes that were lost.
	Place func(op *plan.Operator, instance int) (node string, err error)
	// Nodes lists the nodes that run a part of the job (they are told when it
	// ends).
	Nodes func() []string
	// Epoch is the lease epoch of the coordinator that started this part of
	// the job (the coordinator's own, on its node). Every message of the job
	// this node sends to another carries it; a node refuses messages of the
	// job from a lower epoch than the highest it has seen (see Remote.Fence).
	Epoch uint64
	// Run names this run of the job (one deploy by one coordinator): the
	// same on the coordinator and on every part it prepared. A part acts
	// only on the job-level messages of its own run (end, prune, spawn), so
	// a late message of an earlier run of a job with the same name, even
	// at the same epoch, does not end or change the part of the next one.
	// 0 on the coordinator: it stamps one; 0 on a part: it takes the run of
	// the first spawn request it gets.
	Run int
	// Holds, on the coordinator's node, reports whether the coordinator still
	// holds its lease. It is asked before the coordinator acts on any
	// message; once false, the coordinator abandons the job (another node
	// may coordinate it now). nil: always held.
	Holds func() bool
	// Locality, when set, is the state-location input of a live rescale's
	// planner: the nodes that may run added instances with their free
	// slots, and the nodes' local copies of the job's key groups. The
	// planner places added instances where their incoming groups' state
	// is; without it they are placed as restarted tasks are (Place).
	Locality func() rescale.Locality
	// Running, on the coordinator's node, is called (on the job's actor:
	// it must not block) the moment the job runs: when every task is
	// first wired, and each time a restarted region is wired again. nil:
	// not called.
	Running func()
	// HoldRescaleCommit is a test hook: the coordinator holds every live
	// rescale just before its commit (it logs "rescale held before its
	// commit" once every changed instance has done its part: state has
	// moved) and never commits it, so a test can kill the coordinator's
	// node while a rescale is in progress. The held rescale times out as
	// any other that does not commit.
	HoldRescaleCommit bool
}

// running calls o.Running, if any.
func (o *ClusterOptions) running() {
	if o != nil && o.Running != nil {
		o.Running()
	}
}

// runOf is the run o names (0 without cluster options).
func (o *ClusterOptions) runOf() int {
	if o == nil {
		return 0
	}
	return o.Run
}
