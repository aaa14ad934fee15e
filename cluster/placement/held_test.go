package placement

import (
	"math/rand"
	"slices"
	"testing"

	"github.com/weirstream/weir/cluster"
	"github.com/weirstream/weir/internal/plan"
	"github.com/weirstream/weir/internal/task"
	"github.com/weirstream/weir/keygroups"
)

// TestLocalFromHeld: the bytes a node holds of a task's key groups at the
// checkpoint being restored, from the heartbeats' holdings; a node holding
// part of a new instance's groups (restore at a new parallelism) is
// credited that share; other checkpoints, jobs and operators count for
// nothing.
func TestLocalFromHeld(t *testing.T) {
	table := func(p int) *keygroups.Table {
		tb, err := keygroups.Contiguous(8, p)
		if err != nil {
			t.Fatal(err)
		}
		return tb
	}
	job := func(p int) *plan.Job {
		return &plan.Job{Name: "j", MaxParallelism: 8, Operators: []*plan.Operator{
			{ID: 0, Name: "src", Parallelism: p},
			{ID: 1, Name: "count", Parallelism: p, Keyed: true, Table: table(p)},
		}}
	}
	held := func(node string, hs ...cluster.HeldState) cluster.Heartbeat {
		return cluster.Heartbeat{Node: node, Held: hs}
	}
	hs := func(op string, cp uint64, first, last int, bytes int64) cluster.HeldState {
		return cluster.HeldState{Job: "j", Operator: op, Checkpoint: cp, KeyGroups: [][2]int{{first, last}}, KeyGroupBytes: bytes, Bytes: bytes}
	}
	count := func(i int) task.ID { return task.ID{Operator: "count", OperatorID: 1, Instance: i} }
	for _, tc := range []struct {
		name  string
		p     int
		nodes []cluster.Heartbeat
		want  map[task.ID][]Copy
	}{
		{"nothing held", 2, []cluster.Heartbeat{held("n1")}, nil},
		{"each instance where it ran", 2, []cluster.Heartbeat{held("n1", hs("count", 5, 0, 3, 400)), held("n2", hs("count", 5, 4, 7, 800))},
			map[task.ID][]Copy{count(0): {{Node: "n1", Bytes: 400}}, count(1): {{Node: "n2", Bytes: 800}}}},
		{"another checkpoint, job or operator counts for nothing", 2, []cluster.Heartbeat{
			held("n1", hs("count", 4, 0, 3, 400), hs("src", 5, 0, 3, 10), cluster.HeldState{Job: "other", Operator: "count", Checkpoint: 5,
				KeyGroups: [][2]int{{0, 7}}, KeyGroupBytes: 9, Bytes: 9})}, nil},
		{"a new instance partly on two nodes", 4, []cluster.Heartbeat{held("n1", hs("count", 5, 0, 3, 400)), held("n2", hs("count", 5, 4, 7, 800))},
			// p=4: instance 0 owns 0-1, 1 owns 2-3 (n1's half each), 2 owns 4-5, 3 owns 6-7.
			map[task.ID][]Copy{count(0): {{Node: "n1", Bytes: 200}}, count(1): {{Node: "n1", Bytes: 200}},
				count(2): {{Node: "n2", Bytes: 400}}, count(3): {{Node: "n2", Bytes: 400}}}},
		{"fewer instances: one takes from both", 1, []cluster.Heartbeat{held("n1", hs("count", 5, 0, 3, 400)), held("n2", hs("count", 5, 4, 7, 800))},
			map[task.ID][]Copy{count(0): {{Node: "n1", Bytes: 400}, {Node: "n2", Bytes: 800}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := LocalFromHeld(job(tc.p), 5, tc.nodes)
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for id, w := range tc.want {
				if !slices.Equal(got[id], w) {
					t.Fatalf("%s: got %v, want %v", id, got[id], w)
				}
			}
		})
	}
}

// TestAssignMatchesBruteForceOnLocalBytes: on small random cases where each
// task's state lies on at most one node (a node failure, a restart, a
// whole-cluster restart: each instance's state is where it ran), the greedy
// Assign places as many local bytes as the best of every possible
// placement within the slots. The seed is printed.
func TestAssignMatchesBruteForceOnLocalBytes(t *testing.T) {
	seed := rand.Int63()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	for c := 0; c < 300; c++ {
		nTasks, nNodes := 1+rng.Intn(5), 1+rng.Intn(3)
		var nodes []Slot
		total := 0
		for i := 0; i < nNodes; i++ {
			f := rng.Intn(4)
			nodes = append(nodes, Slot{Node: string(rune('a' + i)), Free: f})
			total += f
		}
		if total < nTasks {
			nodes[0].Free += nTasks - total
		}
		tasks := ops("map", nTasks)
		local := map[task.ID][]Copy{}
		for _, tk := range tasks {
			if rng.Intn(4) > 0 {
				local[tk] = []Copy{{Node: nodes[rng.Intn(nNodes)].Node, Bytes: int64(1 + rng.Intn(1000))}}
			}
		}
		got, err := Assign(Input{Tasks: tasks, Nodes: nodes, Local: local})
		if err != nil {
			t.Fatalf("case %d (seed %d): %v", c, seed, err)
		}
		if g, best := localBytes(got, local), bruteBest(tasks, nodes, local); g != best {
			t.Fatalf("case %d (seed %d): greedy places %d local bytes, the best placement %d; nodes %v, local %v, got %v",
				c, seed, g, best, nodes, local, got)
		}
	}
}

// localBytes is how many bytes of state a placement finds local.
func localBytes(placed map[task.ID]string, local map[task.ID][]Copy) int64 {
	var sum int64
	for tk, node := range placed {
		for _, c := range local[tk] {
			if c.Node == node {
				sum += c.Bytes
			}
		}
	}
	return sum
}

// bruteBest is the most local bytes of any placement of tasks within the
// nodes' free slots.
func bruteBest(tasks []task.ID, nodes []Slot, local map[task.ID][]Copy) int64 {
	free := map[string]int{}
	for _, n := range nodes {
		free[n.Node] = n.Free
	}
	placed := map[task.ID]string{}
	var best int64 = -1
	var walk func(i int)
	walk = func(i int) {
		if i == len(tasks) {
			best = max(best, localBytes(placed, local))
			return
		}
		for _, n := range nodes {
			if free[n.Node] > 0 {
				free[n.Node]--
				placed[tasks[i]] = n.Node
				walk(i + 1)
				delete(placed, tasks[i])
				free[n.Node]++
			}
		}
	}
	walk(0)
	return best
}
