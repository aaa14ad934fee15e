package cluster

import (
	"errors"
	"fmt"
	"sort"
)

// ErrNotEnoughSlots is wrapped by Place when the live nodes have fewer free
// slots than there are tasks.
var ErrNotEnoughSlots = errors.New("not enough free slots")

// Slot is a live node and how many task slots it can give this placement.
type Slot struct {
	Node string
	Free int
}

// TaskRef names one parallel instance of an operator.
type TaskRef struct {
	Operator string
	Instance int
}

// String renders t as operator[instance].
func (t TaskRef) String() string { return fmt.Sprintf("%s[%d]", t.Operator, t.Instance) }

// Place assigns each task a node. Free counts the slots this placement may
// use on a node, including those the job's own tasks occupy now. A task
// whose node in prev is live and has room stays there; the others go, in
// (operator, instance) order, to the node with the fewest instances of the
// same operator, then the most free slots, then the smallest node id — so
// an operator's instances land on different nodes when possible and load
// spreads round-robin. When the nodes lack slots, the error wraps
// ErrNotEnoughSlots and says how many are missing. Place is pure and
// deterministic.
func Place(tasks []TaskRef, nodes []Slot, prev map[TaskRef]string) (map[TaskRef]string, error) {
	return PlaceGrouped(tasks, nodes, prev, nil)
}

// PlaceGrouped is Place where tasks that share a non-empty group in groups
// go to the same node while it has room: the first of them placed by the
// rules above, the rest after it. The runtime groups pipeline i, instance i
// of every operator of a connected job (Flink's default slot sharing), so
// forward edges never leave a node and key-partitioned edges cross less.
func PlaceGrouped(tasks []TaskRef, nodes []Slot, prev map[TaskRef]string, groups map[TaskRef]string) (map[TaskRef]string, error) {
	free := make(map[string]int, len(nodes))
	total := 0
	for _, n := range nodes {
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
	seen := make(map[TaskRef]bool, len(tasks))
	for _, t := range tasks {
		if seen[t] {
			return nil, fmt.Errorf("place: task %s listed twice", t)
		}
		seen[t] = true
	}
	if len(tasks) > total {
		return nil, fmt.Errorf("place %d tasks on %d live nodes with %d free slots: %d slots missing: %w",
			len(tasks), len(nodes), total, len(tasks)-total, ErrNotEnoughSlots)
	}

	order := append([]TaskRef(nil), tasks...)
	sort.Slice(order, func(i, j int) bool {
		if order[i].Operator != order[j].Operator {
			return order[i].Operator < order[j].Operator
		}
		return order[i].Instance < order[j].Instance
	})
	out := make(map[TaskRef]string, len(tasks))
	perOp := make(map[string]map[string]int) // operator → node → instances
	assign := func(t TaskRef, node string) {
		out[t] = node
		free[node]--
		if perOp[t.Operator] == nil {
			perOp[t.Operator] = make(map[string]int)
		}
		perOp[t.Operator][node]++
	}
	var rest []TaskRef
	for _, t := range order {
		if node, ok := prev[t]; ok && free[node] > 0 {
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
