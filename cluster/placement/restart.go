package placement

import (
	"github.com/weirstream/weir/cluster"
	"github.com/weirstream/weir/internal/task"
)

// Restart is what a running job's coordinator places a restarted task from.
type Restart struct {
	Job  string
	Self string // the coordinator's node
	// Nodes are the nodes with a part of the job.
	Nodes []string
	// Eligible are the live nodes among Nodes that still run the incarnation
	// that was given the part (a node that restarted has lost it).
	Eligible map[string]cluster.Heartbeat
	Groups   map[task.ID]string // each task's pipeline (see Pipelines)
	Placed   map[task.ID]string // where each task of the job is placed now
	Local    map[task.ID][]Copy // state location (nil: none known)
}

// Eligible are the nodes of alive that still run the incarnation (start
// time) that incarn says was given a part of the job: a node that
// restarted has lost its part. The coordinator's own node (self) is
// eligible while alive.
func Eligible(alive []cluster.Heartbeat, incarn map[string]int64, self string) map[string]cluster.Heartbeat {
	eligible := map[string]cluster.Heartbeat{}
	for _, hb := range alive {
		if started, ok := incarn[hb.Node]; ok && (hb.Node == self || started == hb.StartedUnixNano) {
			eligible[hb.Node] = hb
		}
	}
	return eligible
}

// Place is the node for restarted task ref: the same node while it is
// eligible (or is the coordinator's), else the eligible node with a free
// slot that already took another task of its pipeline (so a dead node's
// pipeline moves as one), else a node with a free slot by Assign (where its
// state is local first). When no node has a free slot it returns the
// coordinator's node and the error saying so: over capacity beats not
// running.
func (r Restart) Place(ref task.ID) (string, error) {
	if node, ok := r.Placed[ref]; ok {
		if _, live := r.Eligible[node]; live || node == r.Self {
			return node, nil
		}
	}
	free, slots := FreeSlots(r.Job, r.Nodes, r.Eligible, r.Placed, ref)
	if node := PipelineNode(r.Groups, r.Placed, ref, free); node != "" {
		return node, nil
	}
	var local map[task.ID][]Copy
	if c, ok := r.Local[ref]; ok {
		local = map[task.ID][]Copy{ref: c}
	}
	got, err := Assign(Input{Tasks: []task.ID{ref}, Nodes: slots, Local: local})
	if err != nil {
		return r.Self, err
	}
	return got[ref], nil
}

// FreeSlots are the free slots of the eligible nodes among nodes, for
// placing ref of job: a node's slots less those other jobs use (by its
// heartbeat) and less the other tasks of the job placed on it. The job's
// own tasks count by placement, not by heartbeat: during a region restart
// the tasks that restart (ref among them) still show in the heartbeat.
func FreeSlots(job string, nodes []string, eligible map[string]cluster.Heartbeat, placed map[task.ID]string, ref task.ID) (map[string]int, []Slot) {
	mine := map[string]int{}
	for peer, node := range placed {
		if peer != ref {
			mine[node]++
		}
	}
	free := map[string]int{}
	var slots []Slot
	for _, n := range nodes {
		if hb, ok := eligible[n]; ok {
			free[n] = JobFree(hb, job, mine[n])
			slots = append(slots, Slot{Node: n, Free: free[n]})
		}
	}
	return free, slots
}

// PipelineNode is the node with a free slot (free lists the eligible nodes)
// that runs another task of ref's pipeline (the smallest id when several
// do), or "".
func PipelineNode(groups, placed map[task.ID]string, ref task.ID, free map[string]int) string {
	g := groups[ref]
	best := ""
	for peer, node := range placed {
		if peer == ref || g == "" || groups[peer] != g {
			continue
		}
		if free[node] > 0 && (best == "" || node < best) {
			best = node
		}
	}
	return best
}
