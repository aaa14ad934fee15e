package actors

// chaosTickMsg asks the job to kill a random task or channel actor.
type chaosTickMsg struct{ priority }

// chaosPanicMsg makes the receiving actor panic (an injected failure).
type chaosPanicMsg struct{ priority }

// taskResumedMsg reports a restored task's first processed input.
type taskResumedMsg struct {
	priority
	op, instance int
	gen          int
}
