# massgen-mcp — build, test, demo.
GO      ?= go
BIN     ?= bin/massgen-mcp
BENCH   ?= bin/massgen-bench
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)

.PHONY: build build-bench test vet lint fmt-check unit fuzz crash-test load-test demo bench clean e2e tmux bwrap chromium clis
.PHONY: quick realclis heap

# TEST_JOBS is how many suites make test runs at once: the race run (unit) is
# CPU-bound, while realclis, e2e and clients mostly wait on Node processes
# (e2e spent 84 s of CPU in 12 minutes), so even 2 cores run three at once:
# unit beside realclis and e2e, then clients and fuzz as those end; more
# cores run more at once.
TEST_JOBS ?= $(shell n=$$(nproc 2>/dev/null || echo 2); if [ $$n -ge 8 ]; then echo 5; elif [ $$n -ge 4 ]; then echo 4; else echo 3; fi)

build:
	$(GO) build -ldflags "-s -w -X main.ldflagsVersion=$(VERSION)" -o $(BIN) ./cmd/massgen-mcp

# build-bench builds the benchmarks, which never link into the server binary.
build-bench:
	$(GO) build -ldflags "-X main.version=$(VERSION)" -o $(BENCH) ./cmd/massgen-bench

# test is what CI runs: formatting, vet and staticcheck (lint); the binary built once
# (bin/massgen-mcp: the Go tests that run it as a process, e2e and clients all
# use it) and the pinned CLIs installed once; then the suites, TEST_JOBS at a
# time, each one's output kept together (-O): every Go test under the race
# detector (unit: the seeded crash suite, the fault suite and the short load
# suite among them), the coding-agent CLI packages against the real CLIs
# (realclis), the built binary against real MCP clients (e2e), the real Claude
# Code and Codex CLIs against the plugin and install (clients), and each fuzz
# target briefly. The order pairs the CPU-bound race run with the suites that
# wait. The suites' go test runs pass -vet=off: go test's own vet is a subset
# of go vet's checks, which make vet has run over every package (tests
# included) just before, and its different flags missed vet's cache, so it
# type-checked every changed package a second time.
test: fmt-check vet lint build clis tmux bwrap chromium
	MASSGEN_TEST_BIN=$(abspath $(BIN)) MASSGEN_E2E_BIN=$(abspath $(BIN)) \
		$(MAKE) --no-print-directory -O -j$(TEST_JOBS) unit realclis e2e clients heap fuzz

# quick is the inner loop: formatting, vet and the Go tests without the race
# detector, -short (no binary builds, no 20,000-session heap test) and without
# the real CLIs (MASSGEN_REAL_CLIS=0 skips them even when installed);
# unchanged packages' results come from go test's cache. make test is the gate.
quick: fmt-check vet
	MASSGEN_REAL_CLIS=0 $(GO) test -short ./...

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

# lint is staticcheck with its default checks, pinned in tools/go.mod: a
# module of its own, so the server's go.mod does not grow. go tool builds it
# once into the Go build cache (GOCACHE), which keeps the binary for later runs.
lint:
	$(GO) tool -modfile=tools/go.mod staticcheck ./...

# unit runs every Go test under the race detector but the real coding CLIs'
# (realclis runs those). cmd/massgen-mcp's process-level tests (the binary,
# tmux, a go build: t.Parallel) mostly wait, so UNIT_PARALLEL of them run at
# once even on 2 cores; run one after another they were most of that
# package's five minutes. The tests that bound a failover or a lease in
# seconds and the load suite stay sequential.
UNIT_PARALLEL ?= 4
unit: tmux bwrap
	pkgs=$$($(GO) list ./... | grep -v '/providers/cliagent') && [ -n "$$pkgs" ] && \
		$(GO) test -race -count=1 -vet=off -parallel $(UNIT_PARALLEL) -skip '$(CMD_REALCLI_TESTS)' $$pkgs

# heap is the service's heap test (20,000 sessions), which skips under the
# race detector: its own suite beside the others rather than a tail that
# waits for the whole race run to end.
heap:
	$(GO) test -count=1 -vet=off -run '^TestServiceDoesNotGrowWithEverySession$$' ./coordination/

# CMD_REALCLI_TESTS are cmd/massgen-mcp's tests that drive the real coding
# CLIs (team runs through the built binary): realclis runs them, unit skips
# them. TestCmdRealCLITestsRunInRealclis (realclilanes_test.go at the root)
# fails when a test that calls realClaude or clitest.Binary is missing here,
# or a name here is no such test.
CMD_REALCLI_TESTS := ^(TestARealClaudeCodeAgentWritesItsFileAndReachesConsensusWithTheTeam|TestARealClaudeCodeThatLoopsIsStoppedByTheBudgetWithinATurn|TestARealClaudeCodeAgentCallsItsTeamsMCPServerEndToEnd|TestTheBuildingSkillFlowThroughARealClaudeCode|TestAMixedTeamOfTheThreeCodingCLIsAndAnAPIAgentBuildsItsFileAndAgrees|TestRunRehearseRunsTheREADMEsMixedTeamOfflineWithNoRealKey)$$

# realclis runs every test against the real Claude Code, Codex and Gemini CLIs
# (pinned, installed into .cache/clients by e2e/install-clis.sh) under the race
# detector; MASSGEN_REAL_CLIS=1 makes a missing CLI fail them instead of
# skipping. First the coding-agent CLI packages (providers/cliagent/...), in
# one go test with every package at once, then cmd/massgen-mcp's team tests
# through the built binary, one after another (beside each other on a loaded
# 2-core machine Claude Code began its turn before its MCP servers had
# connected). Their time is the CLIs' and the fakes', not the CPU's, so they
# need not queue behind the race run's CPU-bound packages.
realclis: bwrap clis
	MASSGEN_REAL_CLIS=1 $(GO) test -race -count=1 -vet=off -p 6 ./providers/cliagent/...
	MASSGEN_REAL_CLIS=1 $(GO) test -race -count=1 -vet=off -run '$(CMD_REALCLI_TESTS)' ./cmd/massgen-mcp/

clis:
	bash e2e/install-clis.sh

# fuzz runs every fuzz target for a fixed count of inputs (about 5-10 s each;
# FUZZTIME=30s for a longer run); see .ci/fuzz.
fuzz:
	bash .ci/fuzz

# crash-test is the full crash suite: 20 SIGKILLs of the served binary
# mid-run, every session resumed and its ledger checked entry by entry.
crash-test:
	MASSGEN_CRASH_KILLS=20 $(GO) test -count=1 -run '^TestCrashResumeLosesNothing$$' -v ./cmd/massgen-mcp/

# load-test is the full load suite without the race detector: 64 clients in
# two tenants for 20 s; it prints p50/p99 per tool and the peak RSS.
load-test:
	$(GO) test -count=1 -run '^TestLoadSixtyFourClients$$' -v ./cmd/massgen-mcp/

# tmux drives the live view in tests (cmd/massgen-mcp/tmux_test.go): a
# Debian package, installed when missing and we may (root).
tmux:
	@command -v tmux >/dev/null || { [ "$$(id -u)" = 0 ] && apt-get update -qq && apt-get install -y -qq tmux >/dev/null; } || \
		echo "tmux is missing and could not be installed: the live-view tests will skip"

# bwrap is the command sandbox (providers/tools/sandbox): a Debian package,
# installed when missing and we may (root). Its tests fail under CI=... when
# it is missing rather than skip.
bwrap:
	@command -v bwrap >/dev/null || { [ "$$(id -u)" = 0 ] && apt-get update -qq && apt-get install -y -qq bubblewrap >/dev/null; } || \
		echo "bubblewrap is missing and could not be installed: the sandbox tests will skip (and fail under CI)"

# chromium is the browser the web view's test drives (e2e/tests/webui.test.mjs,
# through playwright-core from e2e's lock): Debian's package, installed when
# missing and we may (root); without it that test fails and says how to get it.
chromium:
	@command -v chromium >/dev/null || { [ "$$(id -u)" = 0 ] && apt-get update -qq && apt-get install -y -qq chromium >/dev/null; } || \
		echo "chromium is missing and could not be installed: the web view's browser test (e2e) will fail"

# demo runs a three-agent sim team offline; 391 wins.
demo:
	$(GO) run ./cmd/massgen-mcp run --state-dir $${TMPDIR:-/tmp}/massgen-demo --models sim/strong,sim/strong,sim --seed 1 "What is 17 * 23?"

bench:
	$(GO) test -run '^$$' -bench . -benchtime 20x ./coordination/ ./mcp/
	$(GO) run ./cmd/massgen-bench overhead

clean:
	rm -rf bin

# e2e runs the built binary against real MCP clients (TypeScript SDK v1 and v2
# client, MCP Inspector CLI, official conformance suite) and the web view in
# headless Chromium (screenshots in e2e/artifacts/webui); needs Node + npm and
# the npm registry (Node 22 is installed into .cache/node22). See e2e/run.sh.
e2e:
	bash e2e/run.sh

# clients runs the real Claude Code and Codex CLIs (pinned, installed from npm
# into .cache/clients) against the plugin and `massgen-mcp install`; a temp
# HOME, no network but loopback. See e2e/clients.sh.
clients:
	bash e2e/clients.sh
