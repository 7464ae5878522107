# massgen-mcp — build, test, demo.
GO      ?= go
BIN     ?= bin/massgen-mcp
BENCH   ?= bin/massgen-bench
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)

.PHONY: build build-bench test vet fmt-check unit demo bench clean e2e

build:
	$(GO) build -ldflags "-X main.version=$(VERSION)" -o $(BIN) ./cmd/massgen-mcp

# build-bench builds the benchmarks, which never link into the server binary.
build-bench:
	$(GO) build -ldflags "-X main.version=$(VERSION)" -o $(BENCH) ./cmd/massgen-bench

# test is what CI runs: formatting, vet, every Go test under the race
# detector, then the built binary against real MCP clients (e2e).
test: fmt-check vet unit e2e

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

unit:
	$(GO) test -race -count=1 ./...

# demo runs a three-agent sim team offline; 391 wins.
demo:
	$(GO) run ./cmd/massgen-mcp run --state-dir $${TMPDIR:-/tmp}/massgen-demo --models sim/strong,sim/strong,sim --seed 1 "What is 17 * 23?"

bench:
	$(GO) test -run '^$$' -bench . -benchtime 20x ./coordination/ ./mcp/
	$(GO) run ./cmd/massgen-bench overhead

clean:
	rm -rf bin

# e2e runs the built binary against real MCP clients (TypeScript SDK v1 and v2
# client, MCP Inspector CLI, official conformance suite); needs Node + npm and
# the npm registry (Node 22 is installed into .cache/node22). See e2e/run.sh.
e2e:
	bash e2e/run.sh
