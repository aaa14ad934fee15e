package web

import (
	"context"
	"errors"
)

// ErrNoJob is returned by a Source for a job it does not know.
var ErrNoJob = errors.New("no such job")

// Source is what the page and the API show. LocalSource reads jobs running
// in this process; ClusterSource reads a cluster's status and the jobs this
// node coordinates.
type Source interface {
	// Jobs lists the jobs with their totals and rates.
	Jobs(ctx context.Context) ([]JobSummary, error)
	// Job returns one job's detail, or an error wrapping ErrNoJob.
	Job(ctx context.Context, name string) (*JobDetail, error)
	// Nodes lists the nodes and the state they hold locally.
	Nodes(ctx context.Context) ([]Node, error)
}
