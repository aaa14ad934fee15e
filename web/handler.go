// Package web serves a node's web page and its JSON API: the jobs, their
// graphs with rates and backpressure, checkpoints, failures, restores, the
// key-group map, the nodes and a timeline. The page is embedded in the
// binary and polls the API.
package web

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"time"
)

//go:embed static
var static embed.FS

// apiWait bounds one API request's reads.
const apiWait = 3 * time.Second

// Handler serves the page at / and the JSON API under /api/ from src.
func Handler(src Source) http.Handler {
	mux := http.NewServeMux()
	files, err := fs.Sub(static, "static")
	if err != nil {
		panic(err) // the embedded directory exists: a build error otherwise
	}
	mux.Handle("GET /", http.FileServerFS(files))
	mux.HandleFunc("GET /api/jobs", func(w http.ResponseWriter, r *http.Request) {
		serve(w, r, func(ctx context.Context) (any, error) { return src.Jobs(ctx) })
	})
	mux.HandleFunc("GET /api/jobs/{name}", func(w http.ResponseWriter, r *http.Request) {
		serve(w, r, func(ctx context.Context) (any, error) { return src.Job(ctx, r.PathValue("name")) })
	})
	jobPart := func(part func(*JobDetail) any) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			serve(w, r, func(ctx context.Context) (any, error) {
				d, err := src.Job(ctx, r.PathValue("name"))
				if err != nil {
					return nil, err
				}
				return part(d), nil
			})
		}
	}
	mux.HandleFunc("GET /api/jobs/{name}/keygroups", jobPart(func(d *JobDetail) any { return d.KeyGroups }))
	mux.HandleFunc("GET /api/jobs/{name}/timeline", jobPart(func(d *JobDetail) any { return d.Timeline }))
	mux.HandleFunc("GET /api/nodes", func(w http.ResponseWriter, r *http.Request) {
		serve(w, r, func(ctx context.Context) (any, error) { return src.Nodes(ctx) })
	})
	mux.HandleFunc("GET /api/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "no such API path: "+r.URL.Path)
	})
	return mux
}

// serve answers with read's value as JSON, or its error.
func serve(w http.ResponseWriter, r *http.Request, read func(context.Context) (any, error)) {
	ctx, cancel := context.WithTimeout(r.Context(), apiWait)
	defer cancel()
	v, err := read(ctx)
	switch {
	case errors.Is(err, ErrNoJob):
		writeError(w, http.StatusNotFound, err.Error())
		return
	case err != nil:
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(v) // a failed write is the client's hang-up
}

// writeError answers {"error": msg} with status code.
func writeError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
}
