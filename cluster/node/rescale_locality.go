package node

import (
	"sort"

	"github.com/weirstream/weir/cluster"
	"github.com/weirstream/weir/cluster/placement"
	"github.com/weirstream/weir/rescale"
)

// rescaleLocality is the state-location input of a live rescale of cj's
// job, from the live nodes' heartbeats (see localityOf).
func (a *Agent) rescaleLocality(cj *coordJob) rescale.Locality {
	alive := a.alive()
	a.mu.Lock()
	eligible := placement.Eligible(alive, cj.incarn, a.cfg.ID)
	a.mu.Unlock()
	return localityOf(cj.name, eligible)
}

// localityOf is where a live rescale of job may put added instances: the
// nodes with a part of the job and their free slots; and which of them hold
// a local copy of which key group of the newest checkpoint any of them
// reports (each group of a held range weighs an equal share of its bytes).
func localityOf(job string, nodes map[string]cluster.Heartbeat) rescale.Locality {
	var loc rescale.Locality
	var newest uint64
	for _, hb := range nodes {
		for _, h := range hb.Held {
			if h.Job == job {
				newest = max(newest, h.Checkpoint)
			}
		}
	}
	names := make([]string, 0, len(nodes))
	for n := range nodes {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		hb := nodes[n]
		loc.Nodes = append(loc.Nodes, placement.Slot{Node: n, Free: max(hb.Slots-hb.Used, 0)})
		for _, h := range hb.Held {
			if h.Job != job || h.Checkpoint != newest {
				continue
			}
			count := 0
			for _, r := range h.KeyGroups {
				count += r[1] - r[0] + 1
			}
			for _, r := range h.KeyGroups {
				for g := r[0]; g <= r[1]; g++ {
					loc.Copies = append(loc.Copies, rescale.GroupCopy{Operator: h.Operator, Group: g, Node: n, Bytes: h.KeyGroupBytes / int64(count)})
				}
			}
		}
	}
	return loc
}
