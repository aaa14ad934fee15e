package actors

import "context"

// PartReport is what one node reports of its part of a cluster job for the
// coordinator's web page: its tasks' dumps, the job's record counters on
// that node since the node started its part, and the restores of the
// tasks there.
type PartReport struct {
	Node       string       `msgpack:"node"`
	Tasks      []TaskDump   `msgpack:"tasks"`
	RecordsIn  int64        `msgpack:"in"`  // read by the part's sources
	RecordsOut int64        `msgpack:"out"` // written by the part's sinks
	Restores   RestoreStats `msgpack:"rst"` // without History
	Events     []JobEvent   `msgpack:"ev"`  // the restores of the part's tasks
}

// PartReport reports this node's part of the job. The task dumps are read
// before the counters, so a total never lags a task's count it reports.
func (j *Job) PartReport(ctx context.Context, node string) (PartReport, error) {
	r := PartReport{Node: node}
	d, err := j.Dump(ctx)
	if err != nil {
		return r, err
	}
	r.Tasks = d.Tasks
	r.RecordsIn, r.RecordsOut = j.Metrics.RecordsIn.Load(), j.Metrics.RecordsOut.Load()
	r.Restores = j.Restores()
	r.Restores.History = nil
	for _, e := range j.Events() {
		if e.Kind == EventRestore {
			r.Events = append(r.Events, e)
		}
	}
	return r, nil
}
