package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/weirstream/weir/cluster"
	"github.com/weirstream/weir/cluster/node"
	"github.com/weirstream/weir/transport"
)

// clusterStatus is what `node status --json` prints.
type clusterStatus struct {
	Nodes []nodeStatus      `json:"nodes"`
	Jobs  []clusterJobState `json:"jobs"`
	Rates []jobRates        `json:"rates,omitempty"` // running jobs' rates (status_rates.go)
}

// nodeStatus is one node in `node status`.
type nodeStatus struct {
	node.MemberStatus
	Answered bool                     `json:"answered"`
	BadInput *transport.CounterValues `json:"bad_input,omitempty"`
	Parts    []string                 `json:"job_parts,omitempty"`
	Sees     []string                 `json:"sees,omitempty"` // the live nodes this node knows of
	// Held is the node's local copy of checkpoint state: per job, operator
	// and checkpoint, key-group ranges and bytes.
	Held []cluster.HeldState `json:"local_state,omitempty"`
	// Restored sums, per job, the restores of its tasks on the node while
	// the job runs there.
	Restored []cluster.RestoredState `json:"restores,omitempty"`
}

// clusterJobState is one job in `node status`.
type clusterJobState struct {
	cluster.JobRecord
	Tasks       map[string]string      `json:"tasks,omitempty"`
	Checkpoints []node.CheckpointBrief `json:"checkpoints,omitempty"`
	Restarts    int                    `json:"restarts"`
	Causes      map[string]int         `json:"restart_causes,omitempty"`
	Waiting     string                 `json:"waiting,omitempty"`  // why a job in state waiting is not placed yet
	Rescales    *node.RescaleStatus    `json:"rescales,omitempty"` // its live rescales (node_rescale_status.go)
}

// status is `node status [--json]`.
func (r *registry) status(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cf := newClientCommand(nil, "status", "node status [--json] [--watch [--interval D]]",
		"Lists the cluster's nodes (slots, heartbeat age, bad input seen), its jobs,\nwhere their tasks run, their restarts with causes, their latest checkpoints,\nrecords per second and backpressure per operator.")
	asJSON := cf.fs.Bool("json", false, "print the status as one JSON object")
	wait := cf.fs.Duration("wait", time.Second, "how long to collect the nodes' answers")
	watch := addWatchFlags(cf.fs)
	pos, help, err := cf.parse(args, stdout)
	if help || err != nil {
		return err
	}
	if err := watch.check(cf.fs, *wait); err != nil {
		return usagef("status: %v", err)
	}
	if watch.on && *asJSON {
		return usagef("status: --watch and --json exclude each other (poll --json for scripts)")
	}
	if len(pos) > 0 {
		return usagef("status: unexpected argument %q", pos[0])
	}
	nc, err := cf.connect("weir status")
	if err != nil {
		return fmt.Errorf("status: %w", err)
	}
	defer nc.Close()
	if watch.on {
		return watchStatus(ctx, stdout, watch.interval, func(ctx context.Context) (*clusterStatus, error) { return collectStatus(ctx, nc, *wait) })
	}
	st, err := collectStatus(ctx, nc, *wait)
	if err != nil {
		return fmt.Errorf("status: %w", err)
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		return enc.Encode(st)
	}
	return writeStatus(stdout, st)
}

// collectStatus asks every node and reads the job registry.
func collectStatus(ctx context.Context, nc *nats.Conn, wait time.Duration) (*clusterStatus, error) {
	inbox := nc.NewRespInbox()
	sub, err := nc.SubscribeSync(inbox)
	if err != nil {
		return nil, err
	}
	defer sub.Unsubscribe()
	if err := nc.PublishRequest(node.StatusSubject, inbox, node.Encode(struct{}{})); err != nil {
		return nil, err
	}
	var replies []node.StatusReply
	deadline := time.Now().Add(wait)
	for {
		m, err := sub.NextMsg(time.Until(deadline))
		if err != nil {
			break
		}
		var sr node.StatusReply
		if node.Decode(m, &sr) == nil {
			replies = append(replies, sr)
		}
	}
	st := &clusterStatus{Rates: mergeRates(replies)}
	nodes := map[string]*nodeStatus{}
	for _, sr := range replies {
		for _, m := range sr.Members {
			if _, ok := nodes[m.Node]; !ok {
				nodes[m.Node] = &nodeStatus{MemberStatus: m}
			}
		}
	}
	jobDetail := map[string]node.JobStatus{}
	for _, sr := range replies {
		n, ok := nodes[sr.Node]
		if !ok {
			n = &nodeStatus{MemberStatus: node.MemberStatus{Node: sr.Node}}
			nodes[sr.Node] = n
		}
		bad := sr.BadInput
		n.Slots, n.Used, n.Answered, n.BadInput, n.Parts, n.Held, n.Restored = sr.Slots, sr.Used, true, &bad, sr.Parts, sr.Held, sr.Restored
		for _, m := range sr.Members {
			n.Sees = append(n.Sees, m.Node)
		}
		for _, j := range sr.Jobs {
			jobDetail[j.Name] = j
		}
	}
	for _, n := range nodes {
		st.Nodes = append(st.Nodes, *n)
	}
	sort.Slice(st.Nodes, func(i, j int) bool { return st.Nodes[i].Node < st.Nodes[j].Node })
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	jobs, err := cluster.OpenJobs(ctx, js, cluster.DefaultJobBucket)
	if err != nil {
		return nil, fmt.Errorf("job registry: %w", err)
	}
	recs, err := jobs.List(ctx)
	if err != nil {
		return nil, fmt.Errorf("job registry: %w", err)
	}
	for _, rec := range recs {
		j := clusterJobState{JobRecord: rec, Restarts: rec.Restarts, Causes: rec.RestartCauses}
		if d, ok := jobDetail[rec.Name]; ok {
			j.Tasks, j.Checkpoints, j.Restarts, j.Causes, j.Rescales = d.Tasks, d.Checkpoints, d.Restarts, d.RestartCauses, d.Rescales
			if d.State == node.JobWaiting && rec.State == cluster.JobRunning {
				j.State, j.Waiting = node.JobWaiting, d.Waiting
			}
		}
		st.Jobs = append(st.Jobs, j)
	}
	return st, nil
}

// writeStatus prints the status as tables.
func writeStatus(w io.Writer, st *clusterStatus) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tSLOTS\tUSED\tHEARTBEAT AGE\tBAD INPUT\tJOB PARTS")
	for _, n := range st.Nodes {
		bad := "(no answer)"
		if b := n.BadInput; b != nil {
			bad = fmt.Sprintf("malformed %d, unknown type %d, bad seq %d, slow %d", b.Malformed, b.UnknownType, b.BadSeq, b.SlowConsumer)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.1fs\t%s\t%s\n", n.Node, n.Slots, n.Used, n.AgeS, bad, strings.Join(n.Parts, ","))
	}
	fmt.Fprintln(tw)
	fmt.Fprintln(tw, "JOB\tSTATE\tCOORDINATOR\tRESTARTS\tLATEST CHECKPOINTS\tERROR OR WAITING FOR")
	for _, j := range st.Jobs {
		var cps []string
		for _, c := range j.Checkpoints {
			cps = append(cps, fmt.Sprintf("%d (%s, %.0f ms)", c.ID, c.Mode, c.DurationMs))
		}
		reason := j.Error
		if j.Waiting != "" {
			reason = j.Waiting
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", j.Name, j.State, j.Coordinator, restartsText(j.Restarts, j.Causes), strings.Join(cps, " "), reason)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if err := writeRates(w, st); err != nil {
		return err
	}
	writeHeld(w, st.Nodes)
	writeRestored(w, st.Nodes)
	writeRescales(w, st.Jobs)
	for _, j := range st.Jobs {
		if len(j.Tasks) == 0 {
			continue
		}
		fmt.Fprintf(w, "\ntasks of %s:\n", j.Name)
		var names []string
		for t := range j.Tasks {
			names = append(names, t)
		}
		sort.Strings(names)
		for _, t := range names {
			fmt.Fprintf(w, "  %-24s node %s\n", t, j.Tasks[t])
		}
	}
	return nil
}

// writeHeld prints each node's local state: job, checkpoint, operator,
// key-group ranges and bytes.
func writeHeld(w io.Writer, nodes []nodeStatus) {
	for _, n := range nodes {
		if len(n.Held) == 0 {
			continue
		}
		fmt.Fprintf(w, "\nlocal state of %s:\n", n.Node)
		for _, h := range n.Held {
			var rs []string
			for _, r := range h.KeyGroups {
				rs = append(rs, fmt.Sprintf("%d-%d", r[0], r[1]))
			}
			groups := "none"
			if len(rs) > 0 {
				groups = strings.Join(rs, ",")
			}
			fmt.Fprintf(w, "  job %s checkpoint %d operator %-12s key groups %-16s %d bytes\n", h.Job, h.Checkpoint, h.Operator, groups, h.Bytes)
		}
	}
}

// writeRestored prints, per node, a line per job it restored tasks of: task
// restores, bytes and sections read locally and remotely, their time until
// the tasks ran and until every key group was decoded.
func writeRestored(w io.Writer, nodes []nodeStatus) {
	first := true
	for _, n := range nodes {
		for _, r := range n.Restored {
			if first {
				fmt.Fprintln(w)
				first = false
			}
			fmt.Fprintf(w, "restores on %s: job %s: %d task restores, %d bytes local (%d sections), %d bytes remote (%d sections), %.0f ms summed over tasks, all running in %.0f ms, %s\n",
				n.Node, r.Job, r.Restores, r.LocalBytes, r.LocalSections, r.RemoteBytes, r.RemoteSections, r.TookMs, r.SpanMs, decodedText(r))
		}
	}
}

// decodedText says how long restores took until every key group was
// decoded, or how many are still decoding.
func decodedText(r cluster.RestoredState) string {
	if r.Decoded < r.Restores {
		return fmt.Sprintf("%d of %d with every key group decoded", r.Decoded, r.Restores)
	}
	return fmt.Sprintf("all key groups decoded in %.0f ms (%.0f ms summed over tasks)", r.DecodedSpanMs, r.DecodedMs)
}
