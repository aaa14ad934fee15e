package transport

import (
	"errors"
	"strings"
	"testing"
)

func TestSubjectConstructorsRoundTrip(t *testing.T) {
	tests := []struct {
		got  string
		want string
		sub  Subject
	}{
		{DataSubject("keycount", 0, 1, 0), "weir.keycount.data.0.1.0", Subject{Job: "keycount", Kind: KindData, Edge: 0, From: 1, To: 0}},
		{CreditSubject("job-1", 3, 12, 7), "weir.job-1.credit.3.12.7", Subject{Job: "job-1", Kind: KindCredit, Edge: 3, From: 12, To: 7}},
		{ControlSubject("j_2", "n1"), "weir.j_2.ctl.n1", Subject{Job: "j_2", Kind: KindControl, Node: "n1"}},
		{CoordinatorSubject("j"), "weir.j.ctl.coordinator", Subject{Job: "j", Kind: KindControl, Node: CoordinatorNode}},
		{NodeSubject("n1", KindHeartbeat), "weir.node.n1.hb", Subject{Kind: KindHeartbeat, Node: "n1"}},
		{NodeSubject("n-2", KindCommand), "weir.node.n-2.cmd", Subject{Kind: KindCommand, Node: "n-2"}},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("constructor gave %q, want %q", tt.got, tt.want)
			continue
		}
		s, err := ParseSubject(tt.got)
		if err != nil {
			t.Errorf("ParseSubject(%q): %v", tt.got, err)
			continue
		}
		if s != tt.sub {
			t.Errorf("ParseSubject(%q) = %+v, want %+v", tt.got, s, tt.sub)
		}
		if s.String() != tt.got {
			t.Errorf("%+v.String() = %q, want %q", s, s.String(), tt.got)
		}
	}
	if got := JobWildcard("keycount"); got != "weir.keycount.>" {
		t.Errorf("JobWildcard = %q", got)
	}
	if AllWildcard != "weir.>" {
		t.Errorf("AllWildcard = %q", AllWildcard)
	}
}

func TestParseSubjectRejects(t *testing.T) {
	tests := []struct {
		subject, why string
	}{
		{"", "want weir."},
		{"weir", "want weir."},
		{"weir.>", "want weir."},
		{"weir.j.>", "want weir."},
		{"other.j.data.0.1.0", "want weir."},
		{"weir.j.data.0.1", "6"},
		{"weir.j.data.0.1.0.9", "6"},
		{"weir.j.data.x.1.0", `edge "x"`},
		{"weir.j.data.0.-1.0", `from "-1"`},
		{"weir.j.credit.0.1.01", `to "01"`},
		{"weir.j.credit.0.1.+1", `to "+1"`},
		{"weir.j.data.0.1.99999999999999999999", "to"},
		{"weir.j.ctl", "want weir."},
		{"weir.j.ctl.n1.x", "5 tokens, want 4"},
		{"weir.j.ctl.*", "not allowed"},
		{"weir.j.bogus.n1", `unknown kind "bogus"`},
		{"weir.j k.ctl.n1", "not allowed"},
		{"weir..ctl.n1", "empty"},
		{"weir.node.n1", "want weir."},                          // job "node" is reserved
		{"weir.node.ctl.n1.x.y", "6 tokens"},                    // …whatever the shape
		{"weir.node.coordinator.hb", "reserved"},                // node id "coordinator" is reserved
		{"weir.node.n1.hb.x", "5 tokens"},                       //
		{"weir.node.n1.h*", "kind"},                             //
		{"weir.j.ctl." + strings.Repeat("n", 65), "at most 64"}, //
	}
	for _, tt := range tests {
		s, err := ParseSubject(tt.subject)
		if err == nil {
			t.Errorf("ParseSubject(%q) = %+v, want error", tt.subject, s)
			continue
		}
		if !errors.Is(err, ErrBadSubject) {
			t.Errorf("ParseSubject(%q): %v does not wrap ErrBadSubject", tt.subject, err)
		}
		if msg := err.Error(); !strings.Contains(msg, `"`+tt.subject+`"`) || !strings.Contains(msg, tt.why) {
			t.Errorf("ParseSubject(%q): error %q should name the subject and contain %q", tt.subject, msg, tt.why)
		}
	}
}

func TestValidName(t *testing.T) {
	for _, ok := range []string{"a", "keycount", "job-1", "N_2", strings.Repeat("x", 64)} {
		if err := ValidName(ok); err != nil {
			t.Errorf("ValidName(%q): %v", ok, err)
		}
	}
	tests := []struct{ name, want string }{
		{"", "empty"},
		{strings.Repeat("x", 65), "65 bytes long, at most 64"},
		{"a.b", `'.' at offset 1`},
		{"a*", `'*' at offset 1`},
		{">", `'>' at offset 0`},
		{"a b", `' ' at offset 1`},
		{"jöb", `'ö' at offset 1`},
		{"a\nb", `'\n' at offset 1`},
	}
	for _, tt := range tests {
		err := ValidName(tt.name)
		if err == nil || !errors.Is(err, ErrBadName) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ValidName(%q) = %v, want ErrBadName mentioning %q", tt.name, err, tt.want)
		}
	}
	if err := ValidJob("node"); err == nil || !strings.Contains(err.Error(), "reserved") {
		t.Errorf(`ValidJob("node") = %v, want reserved`, err)
	}
	if err := ValidNode("coordinator"); err == nil || !strings.Contains(err.Error(), "reserved") {
		t.Errorf(`ValidNode("coordinator") = %v, want reserved`, err)
	}
	if err := ValidJob("coordinator"); err != nil {
		t.Errorf(`ValidJob("coordinator") = %v`, err)
	}
	if err := ValidNode("node"); err != nil {
		t.Errorf(`ValidNode("node") = %v`, err)
	}
}
