package placement

import (
	"github.com/weirstream/weir/cluster"
	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/internal/task"
)

// LocalFromHeld is the state location of job p's keyed tasks at checkpoint
// ckpt, from what the nodes' heartbeats say they hold: for each task and
// each node holding some of the task's key groups at ckpt, the bytes of
// those groups. A holding reports key-group ranges and their total bytes,
// so a node holding part of a task's groups (a restore at a new
// parallelism) is credited that share of the bytes. Nodes holding none of
// a task's groups are left out; nil when nothing is held.
func LocalFromHeld(p *plan.Job, ckpt uint64, nodes []cluster.Heartbeat) map[task.ID][]Copy {
	var out map[task.ID][]Copy
	for _, op := range p.Operators {
		if !op.Keyed || op.Table == nil {
			continue
		}
		for i := 0; i < op.Parallelism; i++ {
			groups := op.Table.GroupsOf(i)
			for _, n := range nodes {
				var bytes int64
				for _, h := range n.Held {
					if h.Job == p.Name && h.Operator == op.Name && h.Checkpoint == ckpt {
						bytes += sharedBytes(h, groups)
					}
				}
				if bytes <= 0 {
					continue
				}
				if out == nil {
					out = map[task.ID][]Copy{}
				}
				id := TaskID(op, i)
				out[id] = append(out[id], Copy{Node: n.Node, Bytes: bytes})
			}
		}
	}
	return out
}

// sharedBytes is the share of h's key-group bytes that belongs to groups,
// in proportion to how many of h's key groups are among them.
func sharedBytes(h cluster.HeldState, groups []int) int64 {
	held, shared := 0, 0
	for _, r := range h.KeyGroups {
		held += r[1] - r[0] + 1
	}
	for _, g := range groups {
		for _, r := range h.KeyGroups {
			if g >= r[0] && g <= r[1] {
				shared++
				break
			}
		}
	}
	if held == 0 || shared == 0 {
		return 0
	}
	return h.KeyGroupBytes * int64(shared) / int64(held)
}
