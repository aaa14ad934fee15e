package actors

import (
	"sync"

	taskid "github.com/weirstream/weir/internal/task"
)

// stateFullBytes is the full size of the operator state the ack's part of
// its checkpoint restores from: its whole key-group sections, every link of
// its incremental chains (whichever checkpoint wrote them) and its operator
// state. Without chains it is the bytes the task wrote (stateB).
func (ack *taskAckMsg) stateFullBytes() int64 {
	var n int64
	for _, ref := range ack.snap.KeyGroups {
		n += ref.Size
	}
	for _, chain := range ack.snap.KeyGroupChains {
		for _, l := range chain {
			n += l.Ref.Size
		}
	}
	if ack.snap.OperatorState != nil {
		n += ack.snap.OperatorState.Size
	}
	return max(n, ack.stateB)
}

// taskStateLog keeps each task's full state bytes in the latest completed
// checkpoint (see stateFullBytes); safe for any goroutine.
type taskStateLog struct {
	mu    sync.Mutex
	bytes map[string]int64 // task name → state bytes
}

// record keeps the state sizes the acks of checkpoint id reported.
func (l *taskStateLog) record(id uint64, acks map[taskid.ID]*taskAckMsg, name func(op, instance int) string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.bytes == nil {
		l.bytes = map[string]int64{}
	}
	for _, ack := range acks {
		if ack.id == id {
			l.bytes[name(ack.op, ack.instance)] = ack.stateFullBytes()
		}
	}
}

// TaskStateBytes returns each task's full state bytes in the latest
// completed checkpoint that it acknowledged (with incremental checkpoints,
// its chains' whole sections and deltas, not only what it wrote), by task
// name.
func (j *Job) TaskStateBytes() map[string]int64 {
	j.taskState.mu.Lock()
	defer j.taskState.mu.Unlock()
	out := make(map[string]int64, len(j.taskState.bytes))
	for k, v := range j.taskState.bytes {
		out[k] = v
	}
	return out
}
