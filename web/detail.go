package web

import (
	"slices"
	"time"

	"github.com/weirstream/weir/actors"
	"github.com/weirstream/weir/internal/plan"
	taskid "github.com/weirstream/weir/internal/task"
)

// jobFacts is everything read from a job at one poll; buildDetail turns it
// into the API's JobDetail without reading anything else.
type jobFacts struct {
	summary JobSummary
	plan    *plan.Job
	dump    *actors.JobDump // nil: not available
	// parts are the other nodes' reports of their parts of a cluster job:
	// their record counters, restores and restore events join this node's.
	parts       []actors.PartReport
	checkpoints []actors.CheckpointStat
	supervision actors.SupervisionStats
	restores    actors.RestoreStats
	events      []actors.JobEvent
	stateBytes  map[string]int64  // task → state bytes
	placement   map[string]string // task → node; missing: defaultNode
	defaultNode string
	// held says which nodes hold key group g of operator op locally.
	held func(op string, g int) []string
}

// maxCheckpointHistory bounds the checkpoints a detail lists (the newest).
const maxCheckpointHistory = 100

// buildDetail assembles a job's detail at time now, updating rates.
func buildDetail(f jobFacts, rates *Rates, now time.Time) *JobDetail {
	d := &JobDetail{JobSummary: f.summary, At: now, MaxParallelism: f.plan.MaxParallelism}
	dumped := map[string]actors.TaskDump{}
	if f.dump != nil {
		for _, td := range f.dump.Tasks {
			dumped[td.Task] = td
		}
	}
	job := f.plan.Name
	for _, op := range f.plan.Operators {
		o := Operator{ID: op.ID, Name: op.Name, Kind: kindName(op.Kind), Parallelism: op.Parallelism, Keyed: op.Keyed}
		var groups []int
		if op.Table != nil {
			groups = make([]int, op.Parallelism)
			for g := range op.Table.MaxParallelism {
				if i := op.Table.Owner(g); i < len(groups) {
					groups[i]++
				}
			}
		}
		live := 0
		for i := range op.Parallelism {
			name := taskid.ID{Operator: op.Name, OperatorID: op.ID, Instance: i}.String()
			t := Task{Name: name, Operator: op.Name, Instance: i, Node: nodeOf(f, name), StateBytes: f.stateBytes[name]}
			if groups != nil {
				t.KeyGroups = groups[i]
			}
			if td, ok := dumped[name]; ok {
				t.Phase = td.Phase
				t.Live = td.Phase != actors.PhaseRemote && td.Phase != actors.PhaseNotAnswering && td.Phase != actors.PhaseStopped
			}
			if t.Live {
				td := dumped[name]
				key := job + "/" + name
				t.RecordsIn, t.RecordsOut = td.RecordsIn, td.RecordsOut
				t.InPerS = rates.Rate(key+"/in", td.RecordsIn, now)
				t.OutPerS = rates.Rate(key+"/out", td.RecordsOut, now)
				t.Backpressure = rates.Backpressure(key, blockedOnCredit(td))
				t.QueuedBuffers = queued(td)
				o.InPerS += t.InPerS
				o.OutPerS += t.OutPerS
				o.Backpressure += t.Backpressure
				live++
			}
			d.Tasks = append(d.Tasks, t)
		}
		if live > 0 {
			o.Backpressure /= float64(live)
		}
		d.Operators = append(d.Operators, o)
		for _, e := range op.Outputs {
			d.Edges = append(d.Edges, Edge{From: e.From.ID, To: e.To.ID, Partitioner: e.Partitioner.String()})
		}
		if op.Keyed && op.Table != nil {
			d.KeyGroups = append(d.KeyGroups, keyGroupMap(f, op))
		}
	}
	cps := f.checkpoints[max(0, len(f.checkpoints)-maxCheckpointHistory):]
	for _, c := range cps {
		d.Checkpoints = append(d.Checkpoints, Checkpoint{ID: c.ID, Mode: c.Mode, DurationMs: ms(c.Duration),
			AlignmentMs: ms(c.Alignment), StateBytes: c.StateBytes, StateWrittenBytes: c.StateWrittenBytes, InflightBytes: c.InflightBytes,
			InflightRefBytes: c.InflightRefBytes, InflightBuffers: c.InflightBuffers, Final: c.Final})
	}
	sv := f.supervision
	d.Failures = Failures{Failures: sv.Failures, Restarts: sv.Restarts, Kills: sv.Kills, RecoveryMs: []float64{}, Causes: []Event{}}
	for _, r := range sv.Recovery {
		d.Failures.RecoveryMs = append(d.Failures.RecoveryMs, ms(r))
	}
	rs := f.restores
	events := f.events
	for _, p := range f.parts {
		d.RecordsIn += p.RecordsIn
		d.RecordsOut += p.RecordsOut
		rs.Restores += p.Restores.Restores
		rs.Read.Add(p.Restores.Read)
		events = append(events, p.Events...)
	}
	if len(f.parts) > 0 {
		slices.SortStableFunc(events, func(a, b actors.JobEvent) int { return a.At.Compare(b.At) })
	}
	d.Restores = Restores{Count: rs.Restores, LocalBytes: rs.Read.LocalBytes, RemoteBytes: rs.Read.RemoteBytes,
		LocalSections: rs.Read.LocalSections, RemoteSections: rs.Read.RemoteSections}
	d.Timeline = []Event{}
	for _, e := range events {
		ev := Event{At: e.At, Kind: e.Kind, Task: e.Task, Detail: e.Detail}
		d.Timeline = append(d.Timeline, ev)
		if e.Kind == actors.EventFailure {
			d.Failures.Causes = append(d.Failures.Causes, ev)
		}
	}
	if d.Checkpoints == nil {
		d.Checkpoints = []Checkpoint{}
	}
	if d.KeyGroups == nil {
		d.KeyGroups = []KeyGroups{}
	}
	d.JobSummary.Checkpoints = len(f.checkpoints)
	d.JobSummary.Restarts = sv.Restarts
	return d
}

// keyGroupMap lists who owns each key group of op and who holds it locally.
func keyGroupMap(f jobFacts, op *plan.Operator) KeyGroups {
	m := KeyGroups{Operator: op.Name, Groups: make([]KeyGroup, op.Table.MaxParallelism)}
	for g := range m.Groups {
		i := op.Table.Owner(g)
		name := taskid.ID{Operator: op.Name, OperatorID: op.ID, Instance: i}.String()
		kg := KeyGroup{Group: g, Instance: i, Task: name, Node: nodeOf(f, name)}
		if f.held != nil {
			kg.LocalOn = f.held(op.Name, g)
		}
		m.Groups[g] = kg
	}
	return m
}

// nodeOf is the node task runs on.
func nodeOf(f jobFacts, task string) string {
	if n, ok := f.placement[task]; ok && n != "" {
		return n
	}
	return f.defaultNode
}

// blockedOnCredit reports whether a task waits for output credit.
func blockedOnCredit(td actors.TaskDump) bool {
	if td.Phase == actors.PhaseBlocked {
		return true
	}
	for _, o := range td.Outputs {
		if o.Outbox > 0 {
			return true
		}
	}
	return false
}

// queued counts the buffers waiting at a task: in its input channels, its
// inputs and its outboxes.
func queued(td actors.TaskDump) int {
	n := 0
	for _, in := range td.Inputs {
		n += in.Pending + in.Replay
		if in.Channel != nil {
			n += in.Channel.Queued
		}
	}
	for _, o := range td.Outputs {
		n += o.Outbox
	}
	return n
}

// kindName names an operator kind in the API.
func kindName(k plan.Kind) string {
	switch k {
	case plan.KindSource:
		return "source"
	case plan.KindSink:
		return "sink"
	}
	return "transform"
}

// ms is d in fractional milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
