package actors

import (
	"sync"

	taskid "github.com/weirstream/weir/internal/task"
)

// taskStateLog keeps each task's state bytes in the latest completed
// checkpoint; safe for any goroutine.
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
			l.bytes[name(ack.op, ack.instance)] = ack.stateB
		}
	}
}

// TaskStateBytes returns each task's state bytes in the latest completed
// checkpoint that it acknowledged, by task name.
func (j *Job) TaskStateBytes() map[string]int64 {
	j.taskState.mu.Lock()
	defer j.taskState.mu.Unlock()
	out := make(map[string]int64, len(j.taskState.bytes))
	for k, v := range j.taskState.bytes {
		out[k] = v
	}
	return out
}
