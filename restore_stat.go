package weir

import (
	"time"

	"github.com/weirstream/weir/actors"
)

// RestoreStat sums the task restores of a run on this node: how many
// sections and bytes of state came from the node's local copy and how many
// from the checkpoint store (remote; a single-process run has no local copy,
// so all of it), and the time tasks spent restoring until they ran and
// until every key group was decoded, summed over tasks.
type RestoreStat struct {
	Tasks          int           `json:"tasks"`
	LocalBytes     int64         `json:"local_bytes"`
	RemoteBytes    int64         `json:"remote_bytes"`
	LocalSections  int           `json:"local_sections"`
	RemoteSections int           `json:"remote_sections"`
	Took           time.Duration `json:"-"`
	TookMs         float64       `json:"took_ms"`
	Decoded        time.Duration `json:"-"`
	DecodedMs      float64       `json:"decoded_ms"`
}

// NewRestoreStat summarises a job's restore figures; nil when it restored
// nothing.
func NewRestoreStat(s actors.RestoreStats) *RestoreStat {
	if s.Restores == 0 {
		return nil
	}
	return &RestoreStat{Tasks: s.Restores, LocalBytes: s.Read.LocalBytes, RemoteBytes: s.Read.RemoteBytes,
		LocalSections: s.Read.LocalSections, RemoteSections: s.Read.RemoteSections, Took: s.Took, TookMs: ms(s.Took),
		Decoded: s.Decoded, DecodedMs: ms(s.Decoded)}
}
