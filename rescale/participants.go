package rescale

// Participants returns the tasks that take part in rescale p: every task of
// a failover region that holds an instance of an operator p changes, and
// the instances p adds. regions are the regions of the plan p was made
// from, each the list of its tasks. Regions are closed under the job's
// channels, so every producer and consumer of a changed operator is among
// them: no other task switches a table or a partitioner. Tasks of the other
// regions get no part and no barrier: the commit waits only for the changed
// operators, so a barrier still crossing an unrelated region at the commit
// would reach tasks that no longer expect it.
func Participants(p *Plan, regions [][]TaskKey) map[TaskKey]bool {
	part := map[TaskKey]bool{}
	for _, r := range regions {
		concerned := false
		for _, t := range r {
			if _, changed := p.Change(t.Operator); changed {
				concerned = true
				break
			}
		}
		if !concerned {
			continue
		}
		for _, t := range r {
			part[t] = true
		}
	}
	for _, c := range p.Changes {
		for _, i := range c.Added {
			part[TaskKey{Operator: c.Operator, Instance: i}] = true
		}
	}
	return part
}
