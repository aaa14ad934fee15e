package metrics

import "time"

// RecordRescale records one finished rescale of operator in job: how long it
// took, from the rescale's start until the new instances run with their key
// groups, and how many key groups changed owner. It feeds
// weir_rescale_seconds{job,operator} (a histogram),
// weir_rescale_key_groups_moved_total{job,operator} and
// weir_rescale_key_groups_moved{job,operator} (the latest rescale). The
// rescale's driver calls it once per rescaled operator, when the rescale is
// complete; a failed or aborted rescale is not recorded.
func (r *Registry) RecordRescale(job, operator string, took time.Duration, keyGroupsMoved int) {
	if r == nil {
		return
	}
	r.rescaleSeconds.WithLabelValues(job, operator).Observe(took.Seconds())
	r.rescaleGroupsMoved.WithLabelValues(job, operator).Add(float64(keyGroupsMoved))
	r.rescaleGroupsLatest.WithLabelValues(job, operator).Set(float64(keyGroupsMoved))
}
