package metrics

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// TestEventsAreExposed records each kind of event and reads them back
// through the handler with the Prometheus text parser.
func TestEventsAreExposed(t *testing.T) {
	r := New()
	r.RecordRescale("keycount", "count", 1500*time.Millisecond, 25)
	r.RecordRescale("keycount", "count", 500*time.Millisecond, 7)
	r.ObserveCheckpoint("keycount", "unaligned", 40*time.Millisecond, 3*time.Millisecond, 4096, 2048, 512)
	r.CountRestart("keycount", CauseNodeLost)
	r.ObserveRestore("keycount", 20*time.Millisecond)
	r.ObserveRecovery("keycount", 300*time.Millisecond)
	var nilReg *Registry
	nilReg.RecordRescale("x", "y", time.Second, 1) // a nil registry records nothing
	w := httptest.NewRecorder()
	r.Handler().ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(w.Body.String()))
	if err != nil {
		t.Fatal(err)
	}
	h := fams["weir_rescale_seconds"].GetMetric()[0].GetHistogram()
	if h.GetSampleCount() != 2 || h.GetSampleSum() != 2 {
		t.Errorf("rescale seconds: count %d sum %v, want 2 and 2", h.GetSampleCount(), h.GetSampleSum())
	}
	if v := fams["weir_rescale_key_groups_moved_total"].GetMetric()[0].GetCounter().GetValue(); v != 32 {
		t.Errorf("key groups moved in all %v, want 32", v)
	}
	if v := fams["weir_rescale_key_groups_moved"].GetMetric()[0].GetGauge().GetValue(); v != 7 {
		t.Errorf("key groups moved in the latest %v, want 7", v)
	}
	for name, want := range map[string]uint64{"weir_checkpoint_duration_seconds": 1, "weir_checkpoint_alignment_seconds": 1,
		"weir_restore_seconds": 1, "weir_recovery_seconds": 1} {
		if got := fams[name].GetMetric()[0].GetHistogram().GetSampleCount(); got != want {
			t.Errorf("%s: %d observations, want %d", name, got, want)
		}
	}
	if v := fams["weir_checkpoint_state_bytes"].GetMetric()[0].GetGauge().GetValue(); v != 4096 {
		t.Errorf("full state bytes %v, want 4096", v)
	}
	if v := fams["weir_checkpoint_state_written_bytes"].GetMetric()[0].GetGauge().GetValue(); v != 2048 {
		t.Errorf("state bytes written %v, want 2048", v)
	}
	rs := fams["weir_restarts_total"].GetMetric()[0]
	if rs.GetCounter().GetValue() != 1 || rs.GetLabel()[0].GetValue() != CauseNodeLost {
		t.Errorf("restarts %v", rs)
	}
}
