package cli

import (
	"net/http"

	"github.com/weirstream/weir/cluster/node"
	"github.com/weirstream/weir/web"
)

// agentView is the cluster node a `node start` listener can show.
type agentView = *node.Agent

// mountExtra is the one place where handlers beside /metrics are mounted on
// a node's HTTP listener (--http): the web page at / and its JSON API.
// src says what the node runs. It is called once per listener, before it
// serves; patterns must not clash with "GET /metrics".
func mountExtra(mux *http.ServeMux, src httpSource) {
	if src.Web != nil {
		mux.Handle("/", web.Handler(src.Web))
	}
}
