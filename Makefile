# massgen-mcp — build, test, demo.
GO      ?= go
BIN     ?= bin/massgen-mcp
BENCH   ?= bin/massgen-bench
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)

.PHONY: build build-bench test vet lint fmt-check unit fuzz crash-test load-test demo bench clean e2e tmux bwrap chromium clis
.PHONY: quick realclis heap cmdrace postgres cross

# TEST_JOBS is how many jobs make test runs at once: by default all of them
# (the eight suites and cmdrace), on any machine. Most of the suites' time is waiting (on the built binary,
# the Node clients and the real CLIs, a lease's expiry, a database restart),
# so the waits overlap best when nothing queues; queued on 2 cores, the race
# run waited half a minute behind the Node suites and the real-CLI suite a
# minute and a half. fuzz, lint and cross, which only compute and bound no latency,
# run under nice (NICE), so they take the CPU the others leave.
TEST_JOBS ?= 9
NICE ?= nice -n 10

build:
	$(GO) build -ldflags "-s -w -X main.ldflagsVersion=$(VERSION)" -o $(BIN) ./cmd/massgen-mcp

# build-bench builds the benchmarks, which never link into the server binary.
build-bench:
	$(GO) build -ldflags "-X main.version=$(VERSION)" -o $(BENCH) ./cmd/massgen-bench

# test is what CI runs: formatting and vet; the binary built once
# (bin/massgen-mcp: the Go tests that run it as a process, e2e and clients all
# use it) and the pinned CLIs installed once; then the suites, TEST_JOBS at a
# time, each one's output kept together (-O): every Go test under the race
# detector (unit: the seeded crash suite, the fault suite and the short load
# suite among them), the coding-agent CLI packages against the real CLIs
# (realclis), the built binary against real MCP clients (e2e), the real Claude
# Code and Codex CLIs against the plugin and install (clients), the heap test,
# each fuzz target briefly, staticcheck (lint), and vet and a build for macOS
# (cross). The suites' go test runs
# pass -vet=off: go test's own vet is a subset of go vet's checks, which make
# vet has run over every package (tests included) just before, and its
# different flags missed vet's cache, so it type-checked every changed
# package a second time.
test: fmt-check vet build clis tmux bwrap chromium
	MASSGEN_TEST_BIN=$(abspath $(BIN)) MASSGEN_E2E_BIN=$(abspath $(BIN)) \
		$(MAKE) --no-print-directory -O -j$(TEST_JOBS) unit realclis e2e clients heap fuzz lint cross

# quick is the inner loop: formatting, vet and the Go tests without the race
# detector, -short (no binary builds, no 20,000-session heap test) and without
# the real CLIs (MASSGEN_REAL_CLIS=0 skips them even when installed);
# unchanged packages' results come from go test's cache. make test is the gate.
quick: fmt-check vet postgres
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
	$(NICE) $(GO) tool -modfile=tools/go.mod staticcheck ./...

# cross is go vet (which compiles the tests too) and a build of the server for
# macOS on Apple silicon, so code that only Linux has (pidfds, waitid, OFD
# locks, mounts) stays behind a *_linux.go file or a build tag; what runs
# there instead is docs/DESIGN.md, "Off Linux". Nothing here runs what it
# builds.
cross:
	GOOS=darwin GOARCH=arm64 $(NICE) $(GO) vet ./...
	GOOS=darwin GOARCH=arm64 $(NICE) $(GO) build -o /dev/null ./cmd/massgen-mcp

# unit runs every Go test under the race detector but the real coding CLIs'
# (realclis runs those), in three lanes at once (.ci/lanes): go test over
# every package but cmd/massgen-mcp, and cmd/massgen-mcp's race-built test
# binary (make cmdrace, linked once) twice beside it, once for its
# PostgreSQL process tests (CMD_PG_TESTS) and once for the rest. That
# package's tests mostly wait (the binary, tmux, a lease's expiry, a database
# kept down), and one after another its sequential ones alone were 140 s,
# the race run's critical path. Its process-level tests (t.Parallel) run
# UNIT_PARALLEL at once within their lane; the tests that set the
# environment, count goroutines or child processes, or bound a failover or a
# lease in seconds stay sequential within theirs, and being in another
# process the other lane's tests do not disturb what they count.
# -timeout 20m: coordination/pgstore's tests, mostly waits on leases and
# the database, took 7-8 minutes at a load of 9-17, near go test's default
# 10 minutes per package.
UNIT_PARALLEL ?= 4
unit: tmux bwrap postgres cmdrace
	pkgs=$$($(GO) list ./... | grep -v -e '/providers/cliagent' -e '/cmd/massgen-mcp$$') && [ -n "$$pkgs" ] && \
		bash .ci/lanes "$(GO) test -race -count=1 -vet=off -timeout 20m -parallel $(UNIT_PARALLEL) $$(echo $$pkgs)" \
		"bash .ci/testbin $(abspath $(CMD_RACE_TEST)) cmd/massgen-mcp postgres -test.run '$(CMD_PG_TESTS)'" \
		"bash .ci/testbin $(abspath $(CMD_RACE_TEST)) cmd/massgen-mcp rest -test.parallel $(UNIT_PARALLEL) -test.skip '$(CMD_REALCLI_TESTS)|$(CMD_PG_TESTS)'"

# cmdrace links cmd/massgen-mcp's race-built test binary once, for unit's
# and realclis' lanes: linked by each go test that ran some of its tests, it
# was two links of the largest binary, and the two go tests compiled the
# same race-built packages at once.
CMD_RACE_TEST ?= bin/race/massgen-mcp.test
cmdrace:
	$(GO) test -c -race -vet=off -o $(CMD_RACE_TEST) ./cmd/massgen-mcp/

# CMD_PG_TESTS are cmd/massgen-mcp's PostgreSQL process tests (the Test
# functions of its pg*_test.go: replicas failing over, a database restarted
# mid-run), a lane of make unit of their own; the root's
# TestCmdLanesListEveryTest keeps the list exact.
CMD_PG_TESTS := ^(TestPostgresReplicasServeTheWinnersFilesAfterAFailover|TestADatabaseRestartedMidRunPausesTheRunAndItGoesOn|TestADatabaseCrashedMidRunPausesTheRunAndItGoesOn|TestStoreFlagAndEnvironmentChooseTheStore|TestPostgresReplicasFinishWhatAKilledOneStarted|TestPostgresReplicasServeEachOthersSessions|TestPostgresReplicasTakeTurnsSteppingOneSession|TestSIGTERMLetsPostgresRunsRecordTheirCancelsBeforeTheDatabaseCloses|TestATenantAddedBySIGHUPIsFailedOver|TestSIGTERMedReplicaHandsItsRunsOver|TestAKilledReplicasRunReadsInterruptedOnAnotherWithinSeconds|TestALoneKilledReplicasRunReadsInterruptedToStatus|TestReplicasOnOneStateDirKeepTheirWorkspacesApart)$$

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
# skipping. Two lanes at once (.ci/lanes): the coding-agent CLI packages
# (providers/cliagent/...), in one go test with every package at once, and
# cmd/massgen-mcp's team tests through the built binary (its race-built test
# binary from make cmdrace), one after another. Their time is the CLIs' and
# the fakes', not the CPU's, so they need not queue behind the race run's
# CPU-bound packages, nor behind each other: Claude Code waits for its
# workflow server however loaded the machine (claudecode's defaults), which
# beside each other it once did not. -timeout 20m: a package of real-CLI
# tests under -race on a loaded 2-core machine once ran past go test's
# default 10 minutes (claudecode, geminicli), each test within its own bound.
realclis: bwrap clis cmdrace
	MASSGEN_REAL_CLIS=1 bash .ci/lanes "$(GO) test -race -count=1 -vet=off -timeout 20m -p 6 ./providers/cliagent/..." \
		"bash .ci/testbin $(abspath $(CMD_RACE_TEST)) cmd/massgen-mcp realclis -test.run '$(CMD_REALCLI_TESTS)'"

clis:
	bash e2e/install-clis.sh

# fuzz runs every fuzz target for a fixed count of inputs (about 5-10 s each;
# FUZZTIME=30s for a longer run); see .ci/fuzz.
fuzz:
	$(NICE) bash .ci/fuzz

# crash-test is the full crash suite: 20 SIGKILLs of the served binary
# mid-run, every session resumed and its ledger checked entry by entry.
crash-test:
	MASSGEN_CRASH_KILLS=20 $(GO) test -count=1 -run '^TestCrashResumeLosesNothing$$' -v ./cmd/massgen-mcp/

# load-test is the full load suite without the race detector: 64 clients in
# two tenants for 20 s; it prints p50/p99 per tool and the peak RSS.
load-test:
	$(GO) test -count=1 -run '^TestLoadSixtyFourClients$$' -v ./cmd/massgen-mcp/

# postgres says, in one line, when the PostgreSQL store's tests (pgstore's
# and cmd/massgen-mcp's replicas) will be skipped for want of a server at
# MASSGEN_TEST_POSTGRES (by default the machine's own), and what to install
# and how to start it: go test prints a skip's reason only with -v, which
# unit runs without, so nothing else would say that they did not run. Under
# CI=true they fail instead (and .ci/run before them).
postgres:
	@$(GO) run ./coordination/pgstore/pgtest/reachable.go

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
