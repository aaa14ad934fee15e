package node

import (
	"sort"
	"sync"
	"time"

	"github.com/weirstream/weir/actors"
)

// rateWindow is the least time between the samples a node's rates are
// computed from; they span rateWindow to twice that.
const rateWindow = 2 * time.Second

// JobRates are a job's throughput and backpressure on one node over the
// last few seconds.
type JobRates struct {
	Job     string  `msgpack:"job" json:"job"`
	WindowS float64 `msgpack:"window_s" json:"window_s"` // the time the rates are measured over
	// RecordsInPerS counts records the job's sources read here,
	// RecordsOutPerS records its sinks wrote here.
	RecordsInPerS  float64         `msgpack:"in_per_s" json:"records_in_per_s"`
	RecordsOutPerS float64         `msgpack:"out_per_s" json:"records_out_per_s"`
	Operators      []OperatorRates `msgpack:"operators" json:"operators"`
}

// OperatorRates are one operator's figures over its instances on one node.
type OperatorRates struct {
	Operator      string  `msgpack:"operator" json:"operator"`
	Tasks         int     `msgpack:"tasks" json:"tasks"`
	RecordsInPerS float64 `msgpack:"in_per_s" json:"records_in_per_s"`
	// Backpressured and Busy are the share of the window the instances
	// spent without output credit, or in operator calls (0 … 1, averaged
	// over the instances).
	Backpressured float64 `msgpack:"backpressured" json:"backpressured"`
	Busy          float64 `msgpack:"busy" json:"busy"`
}

// rateSample is a job's counters on this node at one time.
type rateSample struct {
	at      time.Time
	in, out int64
	tasks   []actors.TaskFigures
}

// sampleJob reads job's counters at now.
func sampleJob(j *actors.Job, now time.Time) rateSample {
	return rateSample{at: now, in: j.Metrics.RecordsIn.Load(), out: j.Metrics.RecordsOut.Load(), tasks: j.TaskFigures(now)}
}

// ratesBetween are job's rates from sample base to sample cur; instances
// missing from base (started since) are left out of the operators' figures.
// ok is false when cur is not after base.
func ratesBetween(job string, base, cur rateSample) (JobRates, bool) {
	dt := cur.at.Sub(base.at)
	if dt <= 0 {
		return JobRates{}, false
	}
	secs := dt.Seconds()
	r := JobRates{Job: job, WindowS: secs, RecordsInPerS: float64(cur.in-base.in) / secs,
		RecordsOutPerS: float64(cur.out-base.out) / secs}
	type key struct {
		op string
		i  int
	}
	before := make(map[key]actors.TaskFigures, len(base.tasks))
	for _, t := range base.tasks {
		before[key{t.Operator, t.Instance}] = t
	}
	ops := map[string]*OperatorRates{}
	for _, t := range cur.tasks {
		b, ok := before[key{t.Operator, t.Instance}]
		if !ok {
			continue
		}
		o := ops[t.Operator]
		if o == nil {
			o = &OperatorRates{Operator: t.Operator}
			ops[t.Operator] = o
		}
		o.Tasks++
		o.RecordsInPerS += float64(t.RecordsIn-b.RecordsIn) / secs
		o.Backpressured += min(1, max(0, float64(t.Backpressured-b.Backpressured)/float64(dt)))
		o.Busy += min(1, max(0, float64(t.Busy-b.Busy)/float64(dt)))
	}
	for _, o := range ops {
		o.Backpressured /= float64(o.Tasks)
		o.Busy /= float64(o.Tasks)
		r.Operators = append(r.Operators, *o)
	}
	sort.Slice(r.Operators, func(i, j int) bool { return r.Operators[i].Operator < r.Operators[j].Operator })
	return r, true
}

// rateBook keeps two samples per job on this node, at least rateWindow
// apart, to compute rates from at any time.
type rateBook struct {
	mu   sync.Mutex
	jobs map[string]*samplePair
}

// samplePair is a job's two latest samples, prev older than cur.
type samplePair struct{ prev, cur rateSample }

// tick samples every job in jobs whose latest sample is rateWindow old and
// forgets the jobs no longer there.
func (b *rateBook) tick(now time.Time, jobs map[string]*actors.Job) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.jobs == nil {
		b.jobs = map[string]*samplePair{}
	}
	for name := range b.jobs {
		if jobs[name] == nil {
			delete(b.jobs, name)
		}
	}
	for name, j := range jobs {
		p := b.jobs[name]
		if p == nil {
			b.jobs[name] = &samplePair{cur: sampleJob(j, now)}
			continue
		}
		if now.Sub(p.cur.at) >= rateWindow {
			p.prev, p.cur = p.cur, sampleJob(j, now)
		}
	}
}

// rates are the rates of each job in jobs from its oldest sample to now.
func (b *rateBook) rates(now time.Time, jobs map[string]*actors.Job) []JobRates {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []JobRates
	for name, j := range jobs {
		p := b.jobs[name]
		if p == nil {
			continue
		}
		base := p.prev
		if base.at.IsZero() {
			base = p.cur
		}
		if r, ok := ratesBetween(name, base, sampleJob(j, now)); ok {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Job < out[j].Job })
	return out
}

// localJobs are the jobs with a coordinator or a part on this node, by name.
func (a *Agent) localJobs() map[string]*actors.Job {
	a.mu.Lock()
	defer a.mu.Unlock()
	jobs := make(map[string]*actors.Job, len(a.coord)+len(a.parts))
	for name, j := range a.parts {
		jobs[name] = j
	}
	for name, cj := range a.coord {
		if cj.job != nil {
			jobs[name] = cj.job
		}
	}
	return jobs
}
