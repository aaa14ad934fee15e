package logcheck

import (
	"slices"
	"strings"
	"testing"
)

func TestDuplicateKeys(t *testing.T) {
	for _, c := range []struct {
		line string
		want []string
	}{
		{`{"job":"a","n":1}`, nil},
		{`{"job":"keycount","job":"keycount"}`, []string{"job"}},
		{`{"a":{"b":1,"b":2},"c":[{"d":1,"d":2}],"e":{"b":1}}`, []string{"b", "d"}},
		{`{"node":"n1","x":"y","node":"n1","node":"n1"}`, []string{"node", "node"}},
	} {
		got, err := DuplicateKeys([]byte(c.line))
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("DuplicateKeys(%s) = %v, %v; want %v", c.line, got, err, c.want)
		}
	}
	if _, err := DuplicateKeys([]byte(`{"a":`)); err == nil {
		t.Error("truncated JSON: no error")
	}
}

func TestProblems(t *testing.T) {
	in := strings.Join([]string{
		`{"level":"info","took":"159.89ms","message":"ok"}`,
		`{"level":"info","took":159.89,"message":"no unit"}`,
		`{"level":"info","job":"k","job":"k","message":"dup"}`,
		`not json at all`,
		`{"level":"info","took_ms":12.5,"message":"unit in key"}`,
	}, "\n")
	got, err := Problems(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || !strings.Contains(got[0], `"took"`) || !strings.Contains(got[1], "duplicate keys job") {
		t.Fatalf("problems: %q", got)
	}
}
