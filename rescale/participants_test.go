package rescale

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// twoPipelines is two independent keycount pipelines a- and b- at
// parallelism 2 (a-count 2 → 3 keyed), as failover regions: one per
// pipeline (hash edges join all of a pipeline's instances).
func twoPipelines(t *testing.T) (Topology, [][]TaskKey) {
	t.Helper()
	a, b := keycount(t, 128, 2), keycount(t, 128, 2)
	var topo Topology
	topo.Job, topo.MaxParallelism = "two", 128
	var regions [][]TaskKey
	for _, pl := range []struct {
		prefix string
		t      Topology
	}{{"a-", a}, {"b-", b}} {
		var region []TaskKey
		for _, op := range pl.t.Operators {
			op.Name = pl.prefix + op.Name
			topo.Operators = append(topo.Operators, op)
			for i := 0; i < op.Parallelism; i++ {
				region = append(region, TaskKey{op.Name, i})
			}
		}
		for _, e := range pl.t.Edges {
			e.From, e.To = pl.prefix+e.From, pl.prefix+e.To
			topo.Edges = append(topo.Edges, e)
		}
		regions = append(regions, region)
	}
	return topo, regions
}

func keysOf(m map[TaskKey]bool) string {
	var ks []string
	for k, ok := range m {
		if ok {
			ks = append(ks, k.String())
		}
	}
	slices.Sort(ks)
	return strings.Join(ks, " ")
}

// TestParticipantsAreTheChangedRegions: a rescale of one pipeline's
// operators takes that pipeline's tasks and the added instances, never the
// other pipeline's; one that changes both takes all.
func TestParticipantsAreTheChangedRegions(t *testing.T) {
	topo, regions := twoPipelines(t)
	cases := []struct {
		req  []Target
		want string
	}{
		{[]Target{{"a-count", 3}}, "a-count[0] a-count[1] a-count[2] a-sink[0] a-sink[1] a-source[0] a-source[1]"},
		{[]Target{{"b-sink", 1}}, "b-count[0] b-count[1] b-sink[0] b-sink[1] b-source[0] b-source[1]"},
		{[]Target{{"a-count", 1}, {"b-sink", 3}}, "a-count[0] a-count[1] a-sink[0] a-sink[1] a-source[0] a-source[1] " +
			"b-count[0] b-count[1] b-sink[0] b-sink[1] b-sink[2] b-source[0] b-source[1]"},
	}
	for _, c := range cases {
		t.Run(fmt.Sprint(c.req), func(t *testing.T) {
			p := mustPlan(t, Input{Seq: 1, Topology: topo, Request: c.req})
			if got := keysOf(Participants(p, regions)); got != c.want {
				t.Fatalf("participants\n%s\nwant\n%s", got, c.want)
			}
		})
	}
}
