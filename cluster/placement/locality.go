package placement

import (
	"sort"

	"github.com/weirstream/weir/internal/task"
)

// localScore is how much of a group's latest state a node holds locally.
type localScore struct {
	group string
	node  string
	bytes int64
}

// placeLocal assigns whole groups of tasks (in order; a task without a
// group in groups is a group of its own) to the live nodes (those in free)
// that hold the most of their state in local, highest score first, while
// the node has room for the whole group. Copies on nodes that are not live
// count for nothing.
func placeLocal(order []task.ID, groups map[task.ID]string, local map[task.ID][]Copy, free map[string]int, assign func(task.ID, string)) {
	if len(local) == 0 {
		return
	}
	members := map[string][]task.ID{}
	var names []string
	for _, t := range order {
		g := groups[t]
		if g == "" {
			g = "task " + t.String()
		}
		if members[g] == nil {
			names = append(names, g)
		}
		members[g] = append(members[g], t)
	}
	var scores []localScore
	for _, g := range names {
		byNode := map[string]int64{}
		for _, t := range members[g] {
			for _, c := range local[t] {
				if _, live := free[c.Node]; live {
					byNode[c.Node] += max(c.Bytes, 1)
				}
			}
		}
		for node, b := range byNode {
			scores = append(scores, localScore{group: g, node: node, bytes: b})
		}
	}
	sort.Slice(scores, func(i, j int) bool {
		a, b := scores[i], scores[j]
		if a.bytes != b.bytes {
			return a.bytes > b.bytes
		}
		if a.node != b.node {
			return a.node < b.node
		}
		return a.group < b.group
	})
	placed := map[string]bool{}
	for _, s := range scores {
		if placed[s.group] || free[s.node] < len(members[s.group]) {
			continue
		}
		placed[s.group] = true
		for _, t := range members[s.group] {
			assign(t, s.node)
		}
	}
}
