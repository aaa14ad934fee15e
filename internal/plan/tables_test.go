package plan

import (
	"fmt"
	"strings"
	"testing"

	"github.com/weirstream/weir/keygroups"
)

// TestWriterRoutesByTheConsumersTable: a hash edge routes each record to the
// owner its consumer's table names, whatever the table is; nothing recomputes
// contiguous ranges.
func TestWriterRoutesByTheConsumersTable(t *testing.T) {
	const max = 16
	first, err := keygroups.Contiguous(max, 2)
	if err != nil {
		t.Fatal(err)
	}
	table, _, err := first.Rescale(3)
	if err != nil {
		t.Fatal(err)
	}
	edge := testEdge(KeyGroupHash, 1, 3)
	edge.To.Table = table
	route := router(t, edge, 0, 3, max)
	for k := 0; k < 200; k++ {
		key := fmt.Sprintf("key-%d", k)
		g := int(keygroups.HashKey(key) % max)
		if got, want := route(key), table.Owner(g); got != want {
			t.Fatalf("key %q (group %d): channel %d, want %d from the table", key, g, got, want)
		}
	}
}

// TestWriterRefusesAMissingOrMismatchedTable: a hash edge whose consumer has
// no table, or one for another parallelism, is an error naming the edge.
func TestWriterRefusesAMissingOrMismatchedTable(t *testing.T) {
	edge := testEdge(KeyGroupHash, 1, 3)
	hash := func(rec any) uint32 { return keygroups.HashKey(rec.(string)) }
	cfg := WriterConfig{Edge: edge, Channels: 3, MaxParallelism: 16, BatchSize: 1, Seal: func(int, Batch) {}}
	if _, err := NewWriter(cfg, hash, nil); err == nil || !strings.Contains(err.Error(), "no key-group table") {
		t.Fatalf("no table: error %v", err)
	}
	edge.To.Table, _ = keygroups.Contiguous(16, 2)
	if _, err := NewWriter(cfg, hash, nil); err == nil || !strings.Contains(err.Error(), "up→down") {
		t.Fatalf("table for 2 instances on 3 channels: error %v", err)
	}
}

// TestValidateGivesFirstTablesAndKeepsGivenOnes: Validate gives an operator
// that needs a table the contiguous one, keeps a table set before (as a
// restore does), and refuses one that does not fit the operator.
func TestValidateGivesFirstTablesAndKeepsGivenOnes(t *testing.T) {
	build := func() *Job {
		src := &Operator{ID: 0, Name: "src", Kind: KindSource, Parallelism: 2}
		cnt := &Operator{ID: 1, Name: "count", Kind: KindSink, Parallelism: 3, Keyed: true}
		e := &Edge{ID: 0, From: src, To: cnt, Partitioner: KeyGroupHash,
			NewWriter: func(cfg WriterConfig) (EdgeWriter, error) {
				return NewWriter(cfg, func(rec any) uint32 { return keygroups.HashKey(rec.(string)) }, nil)
			}}
		src.Outputs, cnt.Inputs = []*Edge{e}, []*Edge{e}
		return &Job{Name: "j", MaxParallelism: 16, Operators: []*Operator{src, cnt}, Edges: []*Edge{e}}
	}
	j := build()
	if err := j.Validate(); err != nil {
		t.Fatal(err)
	}
	want, _ := keygroups.Contiguous(16, 3)
	if src := j.Operators[0]; src.Table != nil {
		t.Fatalf("source got a table %+v", src.Table)
	}
	if got := j.Operators[1].Table; !got.Equal(want) || got.Epoch != 0 {
		t.Fatalf("first table %+v, want %+v", got, want)
	}

	j = build()
	first, _ := keygroups.Contiguous(16, 2)
	given, _, _ := first.Rescale(3)
	j.Operators[1].Table = given
	if err := j.Validate(); err != nil {
		t.Fatal(err)
	}
	if j.Operators[1].Table != given {
		t.Fatal("Validate replaced a given table")
	}

	j = build()
	j.Operators[1].Table = first
	if err := j.Validate(); err == nil || !strings.Contains(err.Error(), `"count"`) {
		t.Fatalf("table for 2 instances on an operator of 3: error %v", err)
	}
}
