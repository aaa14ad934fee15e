// Package node is the weir node agent: a long-running member of a cluster
// of nodes joined by NATS. It heartbeats and tracks the other nodes (and
// probes the connections of those it depends on, so that a node whose
// connection closed is declared dead within --disconnect-grace), runs
// the parts of jobs their coordinators place on it, coordinates the jobs
// submitted to it and takes over the jobs whose coordinator died or left.
//
// Every decision is the pure core's (cluster/coord): the agent feeds it the
// heartbeats, probe answers, ticks, lease results, job records and placement and prepare
// results it sees, and carries out the actions it returns over NATS, the
// lease and job buckets (cluster) and the actors. Placement is
// cluster/placement's.
//
// A Go program runs an agent as nats-server is embedded:
//
//	a, err := node.Start(ctx, node.Config{ID: "n1", Workdir: dir, Slots: 8,
//		HeartbeatTimeout: 3 * time.Second, PlacementTimeout: node.DefaultPlacementTimeout,
//		Jobs: build, Log: log}, nc)
//	...
//	coordinator, err := a.Submit("keycount", []string{"--records=1000"})
//	...
//	a.Leave()    // hand the jobs over and tell the other nodes
//	a.Shutdown() // stop
//
// The messages of the cluster's requests (submit, status, cancel, a node's
// commands, job events) are defined here for the clients of `node submit`,
// `node status` and `node cancel`.
package node
