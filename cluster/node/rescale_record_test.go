package node

import (
	"slices"
	"testing"
)

// TestWithOperatorParallelism: a committed rescale's parallelisms replace
// the job flags' --operator-parallelism (in any spelling) with one merged
// flag at the end; the other flags stay as they were.
func TestWithOperatorParallelism(t *testing.T) {
	cases := []struct {
		args []string
		set  map[string]int
		want []string
	}{
		{[]string{"--records", "10"}, map[string]int{"count": 3},
			[]string{"--records", "10", "--operator-parallelism", "count=3"}},
		{[]string{"--operator-parallelism", "count=2,sink=1", "--keys", "5"}, map[string]int{"count": 4},
			[]string{"--keys", "5", "--operator-parallelism", "count=4,sink=1"}},
		{[]string{"-operator-parallelism=count=2", "--operator-parallelism", "map=3"}, map[string]int{"count": 1, "b": 2},
			[]string{"--operator-parallelism", "b=2,count=1,map=3"}},
	}
	for _, c := range cases {
		got, err := withOperatorParallelism(c.args, c.set)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("withOperatorParallelism(%q, %v) = %q, %v; want %q", c.args, c.set, got, err, c.want)
		}
	}
	for _, bad := range [][]string{{"--operator-parallelism"}, {"--operator-parallelism", "count"}, {"--operator-parallelism=count=x"}} {
		if _, err := withOperatorParallelism(bad, map[string]int{"count": 2}); err == nil {
			t.Errorf("withOperatorParallelism(%q) accepted a bad flag", bad)
		}
	}
}
