// Package placement decides which node runs each task of a job: a pure,
// deterministic function of the tasks, the live nodes' free slots, where
// the tasks ran before, their pipelines and where their state is local.
package placement

import (
	"errors"
	"fmt"
	"sort"

	"github.com/weirstream/weir/internal/task"
)

// ErrNotEnoughSlots is wrapped by Place when the live nodes have fewer free
// slots than there are tasks.
var ErrNotEnoughSlots = errors.New("not enough free slots")

// Slot is a live node and how many task slots it can give this placement.
type Slot struct {
	Node string
	Free int
}

// Input is what a placement decides from.
type Input struct {
	Tasks []task.ID
	// Nodes are the live nodes and the slots each gives this placement,
	// including those the job's own tasks occupy now.
	Nodes []Slot
	// Prev is where tasks ran before: a task stays on its live node while it
	// has room.
	Prev map[task.ID]string
	// Groups puts tasks that share a non-empty group on one node while it
	// has room (see PlaceGrouped).
	Groups map[task.ID]string
	// Local is the state location: for each task, the nodes that hold a
	// local copy of its latest state. Placement prefers them (see Assign).
	Local map[task.ID][]Copy
}

// Copy is a node's local copy of a task's latest state.
type Copy struct {
	Node string
	// Bytes is the copy's size; 0 when unknown (it then weighs as 1 byte).
	Bytes int64
}

// Place assigns each task a node. Free counts the slots this placement may
// use on a node, including those the job's own tasks occupy now. A task
// whose node in prev is live and has room stays there; the others go, in
// (operator, instance) order, to the node with the fewest instances of the
// same operator, then the most free slots, then the smallest node id — so
// an operator's instances land on different nodes when possible and load
// spreads round-robin. When the nodes lack slots, the error wraps
// ErrNotEnoughSlots and says how many are missing. Place is pure and
// deterministic.
func Place(tasks []task.ID, nodes []Slot, prev map[task.ID]string) (map[task.ID]string, error) {
	return Assign(Input{Tasks: tasks, Nodes: nodes, Prev: prev})
}

// PlaceGrouped is Place where tasks that share a non-empty group in groups
// go to the same node while it has room: the first of them placed by the
// rules above, the rest after it. The runtime groups pipeline i, instance i
// of every operator of a connected job (Flink's default slot sharing), so
// forward edges never leave a node and key-partitioned edges cross less.
func PlaceGrouped(tasks []task.ID, nodes []Slot, prev map[task.ID]string, groups map[task.ID]string) (map[task.ID]string, error) {
	return Assign(Input{Tasks: tasks, Nodes: nodes, Prev: prev, Groups: groups})
}

// Assign is PlaceGrouped with state location. Before anything else, each
// group (a task without a group is a group of its own) is scored against
// every node: the bytes of its tasks' latest state local to that node, the
// way Flink's StateLocalitySlotAssigner scores slot-sharing groups against
// previous allocations. Pairs are taken highest score first (ties: smaller
// node id, then smaller group), and a group goes whole to its node when the
// node still has room for all of it and the group is not placed yet. The
// tasks left are placed as PlaceGrouped does. Without state location the
// result is PlaceGrouped's.
func Assign(in Input) (map[task.ID]string, error) {
	free := make(map[string]int, len(in.Nodes))
	total := 0
	for _, n := range in.Nodes {
		if n.Node == "" {
			return nil, errors.New("place: node with empty id")
		}
		if _, dup := free[n.Node]; dup {
			return nil, fmt.Errorf("place: node %s listed twice", n.Node)
		}
		f := max(n.Free, 0)
		free[n.Node] = f
		total += f
	}
	seen := make(map[task.ID]bool, len(in.Tasks))
	for _, t := range in.Tasks {
		if seen[t] {
			return nil, fmt.Errorf("place: task %s listed twice", t)
		}
		seen[t] = true
	}
	if len(in.Tasks) > total {
		return nil, fmt.Errorf("place %d tasks on %d live nodes with %d free slots: %d slots missing: %w",
			len(in.Tasks), len(in.Nodes), total, len(in.Tasks)-total, ErrNotEnoughSlots)
	}
	order := append([]task.ID(nil), in.Tasks...)
	sort.Slice(order, func(i, j int) bool {
		if order[i].Operator != order[j].Operator {
			return order[i].Operator < order[j].Operator
		}
		return order[i].Instance < order[j].Instance
	})
	out := make(map[task.ID]string, len(in.Tasks))
	perOp := make(map[string]map[string]int) // operator → node → instances
	assign := func(t task.ID, node string) {
		out[t] = node
		free[node]--
		if perOp[t.Operator] == nil {
			perOp[t.Operator] = make(map[string]int)
		}
		perOp[t.Operator][node]++
	}
	placeLocal(order, in.Groups, in.Local, free, assign)
	var rest []task.ID
	for _, t := range order {
		if _, done := out[t]; done {
			continue
		}
		if node, ok := in.Prev[t]; ok && free[node] > 0 {
			assign(t, node)
		} else {
			rest = append(rest, t)
		}
	}
	ids := make([]string, 0, len(free))
	for id := range free {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	groups := in.Groups
	groupNode := make(map[string]string) // group → node of its first member placed
	for _, t := range order {
		if node, ok := out[t]; ok && groups[t] != "" && groupNode[groups[t]] == "" {
			groupNode[groups[t]] = node
		}
	}
	for _, t := range rest {
		g := groups[t]
		if node, ok := groupNode[g]; ok && g != "" && free[node] > 0 {
			assign(t, node)
			continue
		}
		best := ""
		for _, id := range ids {
			if free[id] > 0 && (best == "" || better(id, best, perOp[t.Operator], free)) {
				best = id
			}
		}
		assign(t, best) // total >= len(tasks) guarantees a node with room
		if g != "" {
			groupNode[g] = best
		}
	}
	return out, nil
}

// better reports whether node a is a better home than node b for a task of
// an operator with instances already on the nodes counted in same.
func better(a, b string, same map[string]int, free map[string]int) bool {
	if same[a] != same[b] {
		return same[a] < same[b]
	}
	if free[a] != free[b] {
		return free[a] > free[b]
	}
	return a < b
}
