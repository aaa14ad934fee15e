# weir: the only tool needed is Go.
GO ?= go

.PHONY: run test build bench bench-backpressure chaos

# Build and run the keycount sample end to end, then show what it wrote.
run:
	$(GO) run ./cmd/node run keycount --records 200000 --keys 100 --parallelism 2 --out weir-out.jsonl --pretty
	@echo "--- first lines of weir-out.jsonl:"
	@head -n 5 weir-out.jsonl
	@echo "--- lines in weir-out.jsonl:"
	@wc -l < weir-out.jsonl

# Vet and run every test with the race detector.
test:
	$(GO) vet ./... && $(GO) test -race -count=1 -timeout 9m ./...

# Build the node binary into bin/node.
build:
	$(GO) build -o bin/node ./cmd/node

# Throughput benchmarks of the samples (records/s per parallelism).
bench:
	$(GO) test -run '^$$' -bench . -count=1 ./samples/keycount ./samples/backpressure

# The FLIP-76 experiment: throughput and checkpoint durations per sleep and mode.
bench-backpressure:
	$(GO) run ./cmd/node bench backpressure

# Keycount under random actor kills, 10 seeds in aligned and unaligned mode,
# each run verified exactly once; a failure prints the seed that replays it.
chaos:
	$(GO) run ./cmd/node chaos keycount --seeds 10 --records 500000 --sleep-ms 0.01 --kill-every 300ms
