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
//	start on=a [boot=D] timeout=D [placement=D] [wait=D] [grace=D]   (wait: --local-wait; grace: DisconnectGrace)
//	hb on=a from=b boot=D at=D [slots=N] [coordinates=J,...]   (a heartbeat of b's incarnation boot)
//	gone on=a from=b at=D | answered on=a from=b    (a probe of b: no responders | answered)
//	probes on=a
//	tick on=a at=D
//	listening on=a at=D   (the node's subscriptions are in place: the settle period counts from D)
//	leaving on=a from=b
//	records on=a at=D jobs=job[:state]:coordinator,...   (state: running unless named)
//	claim on=a job=J | unclaim on=a job=J
//	acquired on=a job=J at=D won=true|false [epoch=N] [holder=ID]
//	renewals on=a
//	renewed on=a job=J at=D result=ok|lost|err
//	holds on=a job=J at=D
//	try on=a job=J at=D [held=true]   (held: live nodes hold every key group of the checkpoint to restore)
//	placed on=a job=J at=D nodes=a,b | err=slots|bad
//	prepared on=a job=J node=b at=D [err=WORD]
//	coordinating on=a job=J
//	failed on=a job=J at=D err=WORD|stopping
//	ended on=a job=J at=D [abandoned=true]
//	leave on=a
//	alive on=a | waiting on=a | awaited on=a
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

// at is the command's logical time.
func at(c *scripttest.Command) time.Time { return epoch.Add(c.DurationOr("at", 0)) }

// list is key's comma-separated words (nil when not given).
func list(c *scripttest.Command, key string) []string {
	v := c.StringOr(key, "")
	if v == "" {
		return nil
	}
	return strings.Split(v, ",")
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
	case "unreachable":
		return fmt.Errorf("%w: no responders", ErrUnreachable)
	}
	return errors.New(word)
}

func (s *script) run(t *testing.T, a *scripttest.Command) []string {
	on := a.String("on")
	if a.Name == "start" {
		s.cores[on] = New(Config{Self: on, Boot: epoch.Add(a.DurationOr("boot", 0)), HeartbeatTimeout: a.DurationOr("timeout", 0), PlacementTimeout: a.DurationOr("placement", 0),
			LocalWait: a.DurationOr("wait", 0), DisconnectGrace: a.DurationOr("grace", 0)})
		return nil
	}
	c := s.cores[on]
	if c == nil {
		a.Fatalf("no node %q started", on)
	}
	job := a.StringOr("job", "")
	switch a.Name {
	case "hb":
		hb := cluster.Heartbeat{Node: a.StringOr("from", ""), Slots: a.IntOr("slots", 0), StartedUnixNano: epoch.Add(a.DurationOr("boot", 0)).UnixNano(),
			SentUnixNano: at(a).UnixNano(), Coordinates: list(a, "coordinates")}
		return lines(c.Heartbeat(at(a), hb)...)
	case "gone":
		return lines(c.ConnGone(at(a), a.StringOr("from", ""))...)
	case "answered":
		c.ConnAnswered(a.StringOr("from", ""))
		return nil
	case "probes":
		return c.ProbeTargets()
	case "tick":
		return lines(c.Tick(at(a))...)
	case "listening":
		c.Listening(at(a))
		return nil
	case "leaving":
		return lines(c.Leaving(a.StringOr("from", ""))...)
	case "records":
		var recs []cluster.JobRecord
		for _, jc := range list(a, "jobs") {
			f := strings.Split(jc, ":")
			rec := cluster.JobRecord{Name: f[0], State: cluster.JobRunning, Coordinator: f[len(f)-1]}
			if len(f) == 3 {
				rec.State = f[1]
			}
			recs = append(recs, rec)
		}
		return lines(c.JobRecords(at(a), recs)...)
	case "claim":
		return []string{strconv.FormatBool(c.Claim(job))}
	case "unclaim":
		c.Unclaim(job)
		return nil
	case "acquired":
		return lines(c.LeaseAcquired(at(a), job, a.StringOr("won", "") == "true", uint64(a.IntOr("epoch", 0)), a.StringOr("holder", "")))
	case "renewals":
		return lines(c.Renewals()...)
	case "renewed":
		var err error
		switch a.StringOr("result", "") {
		case "lost":
			err = cluster.ErrLeaseLost
		case "err":
			err = errors.New("timeout")
		}
		return lines(c.LeaseRenewed(at(a), job, err)...)
	case "holds":
		return []string{strconv.FormatBool(c.Holds(at(a), job))}
	case "try":
		return lines(c.TryPlace(at(a), job, a.StringOr("held", "") == "true"))
	case "placed":
		return lines(c.Placed(at(a), job, list(a, "nodes"), scriptErr(a.StringOr("err", ""))))
	case "prepared":
		return lines(c.Prepared(at(a), job, a.StringOr("node", ""), scriptErr(a.StringOr("err", ""))))
	case "coordinating":
		c.Coordinating(job)
		return nil
	case "failed":
		return lines(c.SetUpFailed(at(a), job, scriptErr(a.StringOr("err", ""))))
	case "ended":
		return lines(c.Ended(at(a), job, a.StringOr("abandoned", "") == "true"))
	case "leave":
		return lines(c.Leave()...)
	case "awaited":
		var out []string
		for node, since := range c.Awaited() {
			out = append(out, fmt.Sprintf("%s since=%v", node, since.Sub(epoch)))
		}
		sort.Strings(out)
		return out
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
	a.Fatalf("unknown command")
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
