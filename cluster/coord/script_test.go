package coord

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir/cluster"
	"github.com/weirstream/weir/cluster/placement"
	"github.com/weirstream/weir/internal/scripttest"
)

// A script in testdata/*.txt drives the cores of one or more nodes (on=ID)
// with logical time (at=D, a duration since the script's epoch):
//
//	start on=a [boot=D] timeout=D [placement=D]
//	hb on=a from=b boot=D at=D [slots=N]      (a heartbeat of b's incarnation boot)
//	tick on=a at=D
//	leaving on=a from=b
//	records on=a at=D jobs=job[:state]:coordinator,...   (state: running unless named)
//	claim on=a job=J | unclaim on=a job=J
//	acquired on=a job=J at=D won=true|false [epoch=N] [holder=ID]
//	renewals on=a
//	renewed on=a job=J at=D result=ok|lost|err
//	holds on=a job=J at=D
//	try on=a job=J at=D
//	placed on=a job=J at=D nodes=a,b | err=slots|bad
//	prepared on=a job=J node=b at=D [err=WORD]
//	coordinating on=a job=J
//	failed on=a job=J at=D err=WORD|stopping
//	ended on=a job=J at=D [abandoned=true]
//	leave on=a
//	alive on=a | waiting on=a
func TestScripts(t *testing.T) {
	scripttest.Run(t, "testdata/*.txt", func() scripttest.Runner {
		s := &script{cores: map[string]*Core{}}
		return s.run
	})
}

// epoch is the script's time zero.
var epoch = time.Unix(1_000_000, 0)

type script struct {
	cores map[string]*Core
}

type args struct {
	t     *testing.T
	where string
	kv    map[string]string
}

func (a args) dur(k string) time.Duration {
	if a.kv[k] == "" {
		return 0
	}
	d, err := time.ParseDuration(a.kv[k])
	if err != nil {
		a.t.Fatalf("%s: %s=%q: %v", a.where, k, a.kv[k], err)
	}
	return d
}

func (a args) at() time.Time { return epoch.Add(a.dur("at")) }

func (a args) int(k string) int {
	if a.kv[k] == "" {
		return 0
	}
	n, err := strconv.Atoi(a.kv[k])
	if err != nil {
		a.t.Fatalf("%s: %s=%q: %v", a.where, k, a.kv[k], err)
	}
	return n
}

func (a args) list(k string) []string {
	if a.kv[k] == "" {
		return nil
	}
	return strings.Split(a.kv[k], ",")
}

// scriptErr is the error a script names: slots (not enough free slots),
// stopping, lost (lease lost) or any other word.
func scriptErr(word string) error {
	switch word {
	case "":
		return nil
	case "slots":
		return fmt.Errorf("place 4 tasks on 1 live nodes with 2 free slots: 2 slots missing: %w", placement.ErrNotEnoughSlots)
	case "stopping":
		return ErrStopping
	case "lost":
		return cluster.ErrLeaseLost
	}
	return errors.New(word)
}

func (s *script) run(t *testing.T, where, line string) []string {
	fields := strings.Fields(line)
	a := args{t: t, where: where, kv: map[string]string{}}
	for _, f := range fields[1:] {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			t.Fatalf("%s: want key=value, got %q", where, f)
		}
		a.kv[k] = v
	}
	on := a.kv["on"]
	if fields[0] == "start" {
		s.cores[on] = New(Config{Self: on, Boot: epoch.Add(a.dur("boot")), HeartbeatTimeout: a.dur("timeout"), PlacementTimeout: a.dur("placement")})
		return nil
	}
	c := s.cores[on]
	if c == nil {
		t.Fatalf("%s: no node %q started", where, on)
	}
	job := a.kv["job"]
	switch fields[0] {
	case "hb":
		hb := cluster.Heartbeat{Node: a.kv["from"], Slots: a.int("slots"), StartedUnixNano: epoch.Add(a.dur("boot")).UnixNano(),
			SentUnixNano: a.at().UnixNano()}
		return lines(c.Heartbeat(a.at(), hb)...)
	case "tick":
		return lines(c.Tick(a.at())...)
	case "leaving":
		return lines(c.Leaving(a.kv["from"])...)
	case "records":
		var recs []cluster.JobRecord
		for _, jc := range a.list("jobs") {
			f := strings.Split(jc, ":")
			rec := cluster.JobRecord{Name: f[0], State: cluster.JobRunning, Coordinator: f[len(f)-1]}
			if len(f) == 3 {
				rec.State = f[1]
			}
			recs = append(recs, rec)
		}
		return lines(c.JobRecords(a.at(), recs)...)
	case "claim":
		return []string{strconv.FormatBool(c.Claim(job))}
	case "unclaim":
		c.Unclaim(job)
		return nil
	case "acquired":
		return lines(c.LeaseAcquired(a.at(), job, a.kv["won"] == "true", uint64(a.int("epoch")), a.kv["holder"]))
	case "renewals":
		return lines(c.Renewals()...)
	case "renewed":
		var err error
		switch a.kv["result"] {
		case "lost":
			err = cluster.ErrLeaseLost
		case "err":
			err = errors.New("timeout")
		}
		return lines(c.LeaseRenewed(a.at(), job, err)...)
	case "holds":
		return []string{strconv.FormatBool(c.Holds(a.at(), job))}
	case "try":
		return lines(c.TryPlace(a.at(), job))
	case "placed":
		return lines(c.Placed(a.at(), job, a.list("nodes"), scriptErr(a.kv["err"])))
	case "prepared":
		return lines(c.Prepared(a.at(), job, a.kv["node"], scriptErr(a.kv["err"])))
	case "coordinating":
		c.Coordinating(job)
		return nil
	case "failed":
		return lines(c.SetUpFailed(a.at(), job, scriptErr(a.kv["err"])))
	case "ended":
		return lines(c.Ended(a.at(), job, a.kv["abandoned"] == "true"))
	case "leave":
		return lines(c.Leave()...)
	case "alive":
		var out []string
		for _, hb := range c.Alive() {
			out = append(out, fmt.Sprintf("%s boot=%v", hb.Node, time.Unix(0, hb.StartedUnixNano).Sub(epoch)))
		}
		return out
	case "waiting":
		var out []string
		for job, why := range c.Waiting() {
			out = append(out, job+": "+why)
		}
		sort.Strings(out)
		return out
	}
	t.Fatalf("%s: unknown command %q", where, fields[0])
	return nil
}

// lines renders actions, one a line.
func lines(acts ...Action) []string {
	out := make([]string, 0, len(acts))
	for _, a := range acts {
		out = append(out, a.String())
	}
	return out
}
