package actors

import "github.com/weirstream/weir/internal/plan"

// ClusterOptions let a job's coordinator place tasks on other nodes.
type ClusterOptions struct {
	// Place picks the node a task instance runs on. It is asked at deploy and
	// again at every restart, so it can avoid nodes that were lost.
	Place func(op *plan.Operator, instance int) (node string, err error)
	// Nodes lists the nodes that run a part of the job (they are told when it
	// ends).
	Nodes func() []string
}
