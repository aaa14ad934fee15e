package node

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

var (
	descHeartbeatAge = prometheus.NewDesc("weir_node_heartbeat_age_seconds",
		"Time since this node last heard the node's heartbeat, alive or dead.", []string{"node"}, nil)
	descNodeUp = prometheus.NewDesc("weir_node_up",
		"1 while this node counts the node alive, 0 once it declared it dead.", []string{"node"}, nil)
)

// membersCollector exports the membership as this agent sees it.
type membersCollector struct{ a *Agent }

func (c membersCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descHeartbeatAge
	ch <- descNodeUp
}

func (c membersCollector) Collect(ch chan<- prometheus.Metric) {
	c.a.mu.Lock()
	ages := c.a.core.Members().Ages(time.Now())
	c.a.mu.Unlock()
	for _, m := range ages {
		up := 1.0
		if m.Dead {
			up = 0
		}
		ch <- prometheus.MustNewConstMetric(descHeartbeatAge, prometheus.GaugeValue, m.Age.Seconds(), m.Node)
		ch <- prometheus.MustNewConstMetric(descNodeUp, prometheus.GaugeValue, up, m.Node)
	}
}
