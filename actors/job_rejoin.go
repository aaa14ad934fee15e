package actors

// NodeBack tells the job that node returned as a new incarnation (or after
// being declared dead) and was prepared again: the tasks it ran are lost
// and restart from the latest checkpoint, where placement puts them back
// on it. Unlike NodeLost, the node is not marked dead for the transport.
func (j *Job) NodeBack(node string) { j.send(&nodeLostMsg{node: node, back: true}) }
