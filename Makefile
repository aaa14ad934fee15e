# weir: the only tool needed is Go.
GO ?= go

.PHONY: run test test-long test-browser build bench bench-backpressure bench-cluster chaos cluster cluster-stop

# Build and run the keycount sample with its web page (address printed as
# "web page: http://..."): RUN_FOR of input through a slow count stage, then
# drain and show what it wrote. RUN_HTTP=host:port picks the page's address.
RUN_FOR ?= 60s
RUN_HTTP ?= 127.0.0.1:8080
run:
	$(GO) run ./cmd/node run keycount --duration $(RUN_FOR) --sleep-ms 0.2 --keys 100 --parallelism 2 --out weir-out.jsonl --pretty --http $(RUN_HTTP)
	@echo "--- first lines of weir-out.jsonl:"
	@head -n 5 weir-out.jsonl
	@echo "--- lines in weir-out.jsonl:"
	@wc -l < weir-out.jsonl

# Vet and run every test with the race detector; cmd/node, the longest
# package, is listed first so that it starts first.
test:
	$(GO) vet ./... && $(GO) test -race -count=1 -p 3 -timeout 15m ./cmd/node ./...

# The long tests kept out of make test for its time (build tag long): a
# two-phase (staging) sink shrunk live between three node processes, with
# the removed instance's node or its successor's SIGKILLed; the short
# cluster soak (three seeds of node chaos cluster); a node paused and one
# whose connection is cut, neither declared dead; a node killed again after
# the whole cluster restarted; keycount under actor kills in both modes,
# also with incremental checkpoints and with a JetStream store; node chaos
# rescale; the short metamorphic check; live rescales under actor kills, of
# keycount, of a staging sink and of a job of several regions; session
# windows under actor kills; and the smoke runs of node bench recovery,
# rescale, nexmark and state.
LONG_TESTS := TestClusterStagingSink|TestChaosClusterShort|TestClusterDeathStoppedNodeIsNotDead|TestClusterDeathReconnectWithinGraceIsNotDead|TestClusterNodeKilledAgainAfterWholeRestartGetsItsTasksBack|TestChaosExactlyOnce|TestChaosIncrementalExactlyOnce|TestChaosClusterIncrementalJetStream|TestChaosRescaleExactlyOnce|TestMetamorphicShort|TestLiveRescaleUnderChaosKills|TestLiveRescaleStagingSinkUnderChaosKills|TestLiveRescaleSeveralRegionsUnderChaosKills|TestSessionWindowsExactlyOnceUnderActorKills|TestBenchRecoverySmoke|TestBenchRescaleSmoke|TestBenchNexmarkAll|TestBenchStateRows
test-long:
	$(GO) test -tags long -race -count=1 -timeout 15m -run '^($(LONG_TESTS))' . ./cmd/node

# The web page in a real browser: installs Chromium with apt-get when no
# chromium or chrome is on PATH, then runs the browser-tagged test (a node
# running keycount with --http, driven by chromedp). The screenshot goes to
# $(SCREENSHOT); the test prints its path.
SCREENSHOT ?= $(CURDIR)/weir-web-page.png
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
test-browser:
	@if ! command -v chromium >/dev/null && ! command -v chromium-browser >/dev/null && \
		! command -v google-chrome >/dev/null && ! command -v google-chrome-stable >/dev/null; then \
		$(SUDO) apt-get update && $(SUDO) apt-get install -y chromium; fi
	WEIR_SCREENSHOT=$(SCREENSHOT) $(GO) test -tags browser -race -count=1 -timeout 5m -v -run 'TestWebPageInBrowser' ./cmd/node

# Build the node binary into bin/node.
build:
	$(GO) build -o bin/node ./cmd/node

# Throughput benchmarks of the samples (records/s per parallelism).
bench:
	$(GO) test -run '^$$' -bench . -count=1 ./samples/keycount ./samples/backpressure

# The FLIP-76 experiment: throughput and checkpoint durations per sleep and mode.
bench-backpressure:
	$(GO) run ./cmd/node bench backpressure

# Keycount under random actor kills, 10 seeds in aligned and unaligned mode;
# 20 runs of a 3-node cluster with one node SIGKILLed (the coordinator's in
# about half); the metamorphic check (keycount and keysum in every checkpoint
# mode, parallelism and disturbance, the same output demanded of each); 20
# runs of keycount under actor kills and a seeded random schedule of live
# rescales. Every run is verified; a failure prints the seed that replays it.
# The keycount runs are repeated unaligned with several checkpoints in
# flight and a small size limit, so barriers fall back to alignment while
# others are in flight; keycount and 5 cluster runs (JetStream store, a node
# SIGKILLed) again with incremental checkpoints, two in flight, and 10
# rescale runs with incremental checkpoints and rarer kills (so that most
# rescales commit). The rescale runs are repeated with a per-instance
# two-phase sink that every step rescales too, up and down. Incremental
# checkpoints are the default; the lines with --checkpoint-incremental=false
# (and the metamorphic cells without -incr) write every checkpoint whole.
# All run even when one fails.
chaos: build
	@status=0; \
	bin/node chaos keycount --seeds 10 --records 500000 --sleep-ms 0.01 --kill-every 300ms --checkpoint-incremental=false || status=1; \
	bin/node chaos keycount --modes unaligned --seeds 5 --records 300000 --sleep-ms 0.01 --kill-every 300ms --checkpoint-interval 5ms --max-concurrent-checkpoints 2 --max-inflight-bytes 65536 --checkpoint-incremental=false || status=1; \
	bin/node chaos keycount --seeds 5 --records 300000 --keys 20000 --sleep-ms 0.01 --kill-every 300ms --checkpoint-incremental --max-concurrent-checkpoints 2 || status=1; \
	bin/node chaos cluster --runs 20 --checkpoint-incremental=false || status=1; \
	bin/node chaos cluster --runs 5 --keys 40000 --checkpoint-incremental --max-concurrent-checkpoints 2 || status=1; \
	bin/node chaos metamorphic || status=1; \
	bin/node chaos rescale --runs 20 --checkpoint-incremental=false || status=1; \
	bin/node chaos rescale --runs 12 --staging-sink --checkpoint-incremental=false || status=1; \
	bin/node chaos rescale --runs 10 --keys 15000 --kill-every 1s --checkpoint-incremental || status=1; \
	exit $$status

# Cluster benchmark: keycount over 3 node processes versus one process,
# bytes on the wire per record, and the time from SIGKILL of a node to the
# job running again.
bench-cluster: build
	bin/node bench cluster

# A local 3-node cluster in the background (n1 embeds NATS on
# 127.0.0.1:$(CLUSTER_PORT)); state and logs under .cluster/.
CLUSTER_PORT ?= 4222
CLUSTER_MONITOR_PORT ?= 8222
CLUSTER_DIR := .cluster
cluster: build
	@mkdir -p $(CLUSTER_DIR)
	@if [ -f $(CLUSTER_DIR)/n1.pid ] && kill -0 $$(cat $(CLUSTER_DIR)/n1.pid) 2>/dev/null; then \
		echo "a cluster is already running (make cluster-stop first)"; exit 1; fi
	@bin/node start --id n1 --workdir $(CLUSTER_DIR)/n1 --embed-nats 127.0.0.1:$(CLUSTER_PORT) \
		--embed-monitor 127.0.0.1:$(CLUSTER_MONITOR_PORT) > $(CLUSTER_DIR)/n1.log 2>&1 & echo $$! > $(CLUSTER_DIR)/n1.pid
	@for i in $$(seq 50); do bin/node status --nats nats://127.0.0.1:$(CLUSTER_PORT) --wait 100ms >/dev/null 2>&1 && break; sleep 0.1; done
	@for n in n2 n3; do \
		bin/node start --id $$n --workdir $(CLUSTER_DIR)/$$n --nats nats://127.0.0.1:$(CLUSTER_PORT) \
			> $(CLUSTER_DIR)/$$n.log 2>&1 & echo $$! > $(CLUSTER_DIR)/$$n.pid; done
	@sleep 1
	@bin/node status --nats nats://127.0.0.1:$(CLUSTER_PORT)
	@echo
	@echo "cluster running; logs in $(CLUSTER_DIR)/n*.log. Try:"
	@echo "  bin/node submit keycount --records 5000000 --out $(CURDIR)/$(CLUSTER_DIR)/out.jsonl --nats nats://127.0.0.1:$(CLUSTER_PORT)"
	@echo "  bin/node status --nats nats://127.0.0.1:$(CLUSTER_PORT)"
	@echo "  curl -s http://127.0.0.1:$(CLUSTER_MONITOR_PORT)/varz   # NATS's own statistics"
	@echo "  bin/node inspect 'weir.keycount.>' --nats nats://127.0.0.1:$(CLUSTER_PORT)   (or: nats sub 'weir.>')"
	@echo "  make cluster-stop"

# Stop the local cluster (SIGTERM: nodes leave gracefully).
cluster-stop:
	@for n in n3 n2 n1; do \
		if [ -f $(CLUSTER_DIR)/$$n.pid ]; then kill -TERM $$(cat $(CLUSTER_DIR)/$$n.pid) 2>/dev/null; \
			for i in $$(seq 100); do kill -0 $$(cat $(CLUSTER_DIR)/$$n.pid) 2>/dev/null || break; sleep 0.1; done; \
			rm -f $(CLUSTER_DIR)/$$n.pid; echo "stopped $$n"; fi; done
