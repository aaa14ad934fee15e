package actors

// NodeBack tells the job that node returned as a new incarnation (or after
// being declared dead) and was prepared again: the tasks it ran are lost
// and restart from the latest checkpoint, where placement puts them back
// on it. Unlike NodeLost, the node is not marked dead for the transport.
func (j *Job) NodeBack(node string) { j.send(&nodeLostMsg{node: node, back: true}) }

// relink starts the coordinator's links to node, back as a new
// incarnation, at a new generation: the new incarnation expects each link
// to start at 1, and a late message of the old generation reads as stale.
func (a *jobActor) relink(node string) {
	if a.cl.genTo == nil {
		a.cl.genTo = map[string]int{}
	}
	a.cl.genTo[node] = max(stamp(), a.linkGen(node)+1)
}

// linkGen is the generation of the coordinator's links to node.
func (a *jobActor) linkGen(node string) int {
	if g, ok := a.cl.genTo[node]; ok {
		return g
	}
	return a.cl.gen
}
