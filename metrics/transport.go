package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/weirstream/weir/transport"
)

var (
	descBadInput = prometheus.NewDesc("weir_bad_input_total",
		"Messages refused or lost on the wire, by kind: malformed, unknown_type, bad_seq, slow_consumer.", []string{"kind"}, nil)
	descNATSMessages = prometheus.NewDesc("weir_nats_messages_total",
		"Weir messages over NATS per link between nodes, by direction (sent, received).", []string{"direction", "from_node", "to_node"}, nil)
	descNATSBytes = prometheus.NewDesc("weir_nats_payload_bytes_total",
		"Payload bytes of weir messages over NATS per link between nodes, by direction (sent, received).", []string{"direction", "from_node", "to_node"}, nil)
)

// transportCollector reads a node's transport counters at scrape time.
type transportCollector struct{ c *transport.Counters }

func (t transportCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descBadInput
	ch <- descNATSMessages
	ch <- descNATSBytes
}

func (t transportCollector) Collect(ch chan<- prometheus.Metric) {
	v := t.c.Snapshot()
	for _, k := range []struct {
		kind string
		n    uint64
	}{{"malformed", v.Malformed}, {"unknown_type", v.UnknownType}, {"bad_seq", v.BadSeq}, {"slow_consumer", v.SlowConsumer}} {
		ch <- prometheus.MustNewConstMetric(descBadInput, prometheus.CounterValue, float64(k.n), k.kind)
	}
	for _, l := range t.c.Links.Snapshot() {
		ch <- prometheus.MustNewConstMetric(descNATSMessages, prometheus.CounterValue, float64(l.Messages), l.Direction, l.From, l.To)
		ch <- prometheus.MustNewConstMetric(descNATSBytes, prometheus.CounterValue, float64(l.Bytes), l.Direction, l.From, l.To)
	}
}

// WatchTransport exports c (bad input counted, NATS messages and bytes per
// link) from this registry.
func (r *Registry) WatchTransport(c *transport.Counters) {
	r.SetSource("transport", transportCollector{c})
}
