package placement

import (
	"fmt"
	"sort"

	"github.com/weirstream/weir/cluster"
)

// Stored is what a checkpoint stores of one operator, as the nodes' local
// copies count it: the key groups with a section (whole or a chain) and
// the bytes of its other sections (operator state, and channel state the
// checkpoint wrote itself).
type Stored struct {
	KeyGroups  []int
	OtherBytes int64
}

// MissingHeld lists what of checkpoint ckpt of job (want: operator → what
// it stores) no node of nodes reports holding at ckpt, sorted: a key group
// as "operator/group", operator and channel state as "operator: H of W
// bytes of operator and channel state". Empty when every node whose copy
// the restore can use is back: placing now puts as many bytes where they
// lie as waiting for more nodes could. A checkpoint that stores nothing is
// reported as "nothing stored", never as all held: there is then nothing
// to tell that the cluster's nodes are back.
func MissingHeld(job string, ckpt uint64, want map[string]Stored, nodes []cluster.Heartbeat) []string {
	var missing []string
	stored := false
	for op, s := range want {
		stored = stored || len(s.KeyGroups) > 0 || s.OtherBytes > 0
		for _, g := range s.KeyGroups {
			if !HeldAt(job, op, ckpt, g, nodes) {
				missing = append(missing, fmt.Sprintf("%s/%d", op, g))
			}
		}
		if held := otherHeld(job, op, ckpt, nodes); held < s.OtherBytes {
			missing = append(missing, fmt.Sprintf("%s: %d of %d bytes of operator and channel state", op, held, s.OtherBytes))
		}
	}
	if !stored {
		return []string{"nothing stored"}
	}
	sort.Strings(missing)
	return missing
}

// HeldAt reports whether a node of nodes holds key group g of operator op of
// job at checkpoint ckpt.
func HeldAt(job, op string, ckpt uint64, g int, nodes []cluster.Heartbeat) bool {
	for _, n := range nodes {
		for _, h := range n.Held {
			if h.Job != job || h.Operator != op || h.Checkpoint != ckpt {
				continue
			}
			for _, r := range h.KeyGroups {
				if g >= r[0] && g <= r[1] {
					return true
				}
			}
		}
	}
	return false
}

// otherHeld sums the bytes of operator op's sections other than key groups
// that nodes hold of job at checkpoint ckpt.
func otherHeld(job, op string, ckpt uint64, nodes []cluster.Heartbeat) int64 {
	var sum int64
	for _, n := range nodes {
		for _, h := range n.Held {
			if h.Job == job && h.Operator == op && h.Checkpoint == ckpt {
				sum += h.Bytes - h.KeyGroupBytes
			}
		}
	}
	return sum
}
