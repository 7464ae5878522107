#!/usr/bin/env bash
# End-to-end tests of the built massgen-mcp binary with real MCP clients
# (issue 3): the TypeScript SDK v1 and the v2 client over stdio and HTTP, the
# MCP Inspector CLI, and the official conformance suite.
#
# Needs only Go, Node (any; 20 is fine) + npm, and the npm registry: Node 22,
# which the Inspector and the conformance suite require, is installed from the
# npm `node` package into .cache/node22 and used for everything here.
#
#   e2e/run.sh                     build, install, run every test file
#   e2e/run.sh tests/sdk-v1.test.mjs   run some files only (paths under e2e/)
#
# Environment: MASSGEN_E2E_BIN to test another binary (skips `make build`);
# E2E_NODE_VERSION to pin another Node 22 release.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
E2E="$ROOT/e2e"
NODE_VERSION="${E2E_NODE_VERSION:-22.23.3}"
NODE_PREFIX="$ROOT/.cache/node22"
NODE="$NODE_PREFIX/node_modules/node/bin/node"

log() { printf '[e2e] %s\n' "$*" >&2; }

# 1. Node 22 from the npm registry, with the machine's npm.
if ! [ -x "$NODE" ] || [ "$("$NODE" --version 2>/dev/null)" != "v$NODE_VERSION" ]; then
  log "installing node@$NODE_VERSION into .cache/node22"
  mkdir -p "$NODE_PREFIX"
  npm install --prefix "$NODE_PREFIX" --no-audit --no-fund --no-save --loglevel=error "node@$NODE_VERSION" </dev/null
  if ! [ -x "$NODE" ]; then
    log "npm installed the node package but $NODE is missing (did npm skip its preinstall script?)"
    exit 1
  fi
fi
export PATH="$(dirname "$NODE"):$PATH"
log "node $("$NODE" --version), npm $(npm --version)"

# 2. The pinned test dependencies, exactly as locked (skipped when the lock is
#    unchanged since the last successful install).
STAMP="$E2E/node_modules/.e2e-installed-lock"
if ! cmp -s "$E2E/package-lock.json" "$STAMP" 2>/dev/null; then
  log "npm ci in e2e/"
  (cd "$E2E" && npm ci --no-audit --no-fund --loglevel=error </dev/null)
  cp "$E2E/package-lock.json" "$STAMP"
fi

# 3. The binary under test.
if [ -n "${MASSGEN_E2E_BIN:-}" ]; then
  BIN="$MASSGEN_E2E_BIN"
else
  log "make build"
  make -C "$ROOT" --no-print-directory build >&2
  BIN="$ROOT/bin/massgen-mcp"
fi
[ -x "$BIN" ] || { log "binary $BIN missing"; exit 1; }
export MASSGEN_E2E_BIN="$BIN"

# 4. The HTTP server for the HTTP tests: a free loopback port, a fresh state
#    dir, killed on exit.
WORK="$(mktemp -d "${TMPDIR:-/tmp}/massgen-e2e.XXXXXX")"
SERVER_PID=""
cleanup() {
  local rc=$?
  if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill "$SERVER_PID" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$SERVER_PID" 2>/dev/null || true
  fi
  if [ "$rc" -ne 0 ] && [ -s "$WORK/http-server.log" ]; then
    log "HTTP server log (last 60 lines):"
    tail -n 60 "$WORK/http-server.log" >&2 || true
  fi
  rm -rf "$WORK"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() {
  "$NODE" -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}

healthy=""
for attempt in 1 2 3; do
  PORT="$(free_port)"
  mkdir -p "$WORK/http-state"
  "$BIN" serve --http "127.0.0.1:$PORT" --state-dir "$WORK/http-state" >"$WORK/http-server.log" 2>&1 </dev/null &
  SERVER_PID=$!
  # 90 s, as the tests' own starts get (harness.mjs, START_TIMEOUT_MS): the
  # other lanes' race builds load the machine; a server that exits (its
  # port taken) ends the wait at once and the next attempt picks another.
  up_by=$((SECONDS + 90))
  while [ "$SECONDS" -lt "$up_by" ]; do
    if ! kill -0 "$SERVER_PID" 2>/dev/null; then break; fi
    if "$NODE" -e 'fetch(process.argv[1]).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))' "http://127.0.0.1:$PORT/healthz"; then
      healthy=1
      break
    fi
    sleep 0.1
  done
  [ -n "$healthy" ] && break
  log "HTTP server did not come up on port $PORT (attempt $attempt):"
  tail -n 20 "$WORK/http-server.log" >&2 || true
  kill "$SERVER_PID" 2>/dev/null || true
  wait "$SERVER_PID" 2>/dev/null || true
  SERVER_PID=""
done
[ -n "$healthy" ] || { log "could not start the HTTP server"; exit 1; }
export MASSGEN_E2E_URL="http://127.0.0.1:$PORT/mcp"
log "HTTP server pid $SERVER_PID at $MASSGEN_E2E_URL"

# 5. The tests. node --test prints its summary (tests/pass/fail) last and
#    exits non-zero on any failure. --expose-gc (passed on to each file's
#    process) lets a test collect garbage where a dropped fetch Response
#    would otherwise close its stream at a random moment (webui.test.mjs).
cd "$E2E"
if [ "$#" -gt 0 ]; then
  FILES=("$@")
else
  FILES=(tests/*.test.mjs)
fi
set +e
"$NODE" --expose-gc --test --test-reporter=spec --test-concurrency=1 --test-timeout=600000 "${FILES[@]}"
status=$?
set -e
exit "$status"
