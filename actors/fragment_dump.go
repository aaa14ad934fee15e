package actors

import "sort"

// dump answers a dumpJobMsg for a job's part on this node: it lists the
// part's tasks, which Dump then asks one by one. The part has no
// coordinator state: its CoordinatorDump holds only the mailbox.
func (f *fragment) dump(m *dumpJobMsg) {
	targets := make([]dumpTarget, 0, len(f.tasks))
	for id, ft := range f.tasks {
		targets = append(targets, dumpTarget{name: id.String(), pid: ft.pid, stopped: ft.pid == nil})
	}
	sort.Slice(targets, func(i, j int) bool { return targets[i].name < targets[j].name })
	m.reply <- dumpJobReply{coord: CoordinatorDump{Mailbox: m.lanes}, targets: targets}
}
