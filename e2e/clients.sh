#!/usr/bin/env bash
# The real Claude Code, Codex and Gemini CLIs against this repository's plugin and the
# install command (issue 19): plugin validation, marketplace + plugin install
# from the local path, `claude mcp list` / `codex mcp list` / `gemini mcp list` after
# `massgen-mcp install`, idempotence, and uninstall restoring byte for byte.
#
# The CLIs are installed from npm, pinned, into .cache/clients (once). Every
# run uses a temporary HOME with telemetry and updates off; nothing but
# loopback is reached (the server they start is the sim-only binary built
# here).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PREFIX="$ROOT/.cache/clients"
CLAUDE="$PREFIX/node_modules/.bin/claude"
CODEX="$PREFIX/node_modules/.bin/codex"
GEMINI="$PREFIX/node_modules/.bin/gemini"

log() { printf '[clients] %s\n' "$*" >&2; }
fail() { printf '[clients] FAIL: %s\n' "$*" >&2; exit 1; }

# 1. The CLIs, pinned: one installer for every test that drives them (an
# npm install of only some of them here removed the others from the prefix).
bash "$ROOT/e2e/install-clis.sh"

# 2. The binary, as massgen-mcp on PATH: MASSGEN_E2E_BIN when given (make
# test builds it once for every suite), else built here.
WORK="$(mktemp -d "${TMPDIR:-/tmp}/massgen-clients.XXXXXX")"
FAKE_PID=""
trap '[ -n "$FAKE_PID" ] && kill "$FAKE_PID" 2>/dev/null; rm -rf "$WORK"' EXIT
mkdir -p "$WORK/bin"
if [ -n "${MASSGEN_E2E_BIN:-}" ]; then
  ln -s "$(cd "$(dirname "$MASSGEN_E2E_BIN")" && pwd)/$(basename "$MASSGEN_E2E_BIN")" "$WORK/bin/massgen-mcp"
else
  (cd "$ROOT" && go build -o "$WORK/bin/massgen-mcp" ./cmd/massgen-mcp)
fi
export PATH="$WORK/bin:$PATH"

# Every client run: a fresh HOME, no telemetry, no updates, a timeout.
export DISABLE_AUTOUPDATER=1 DISABLE_TELEMETRY=1 DISABLE_ERROR_REPORTING=1 \
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 CODEX_DISABLE_UPDATE_CHECK=1
unset CLAUDE_CONFIG_DIR CODEX_HOME GEMINI_CLI_HOME XDG_STATE_HOME XDG_CONFIG_HOME VSCODE_APPDATA VSCODE_PORTABLE || true
fresh_home() { HOME="$(mktemp -d "$WORK/home.XXXXXX")"; export HOME; }
# A client's setup commands are local, but under make test's parallel race
# lanes on two cores one has outlasted 120 s (CI exit 124, no word of which):
# each gets 300 s, and one that takes over 30 s or fails says so.
claude() {
  local t0=$SECONDS rc=0
  timeout 300 "$CLAUDE" "$@" </dev/null || rc=$?
  if [ "$rc" -ne 0 ] || [ $((SECONDS - t0)) -gt 30 ]; then log "claude $1 ${2:-} took $((SECONDS - t0)) s (exit $rc)"; fi
  return "$rc"
}
codex() { TMPDIR="$WORK" timeout 300 "$CODEX" "$@" </dev/null 2>/dev/null; }
gemini() { GEMINI_CLI_NO_RELAUNCH=true NO_COLOR=1 timeout 300 "$GEMINI" "$@" </dev/null 2>&1; }
sum() { sha256sum "$1" | cut -d' ' -f1; }
expect() { # expect WHAT TEXT PATTERN
  grep -qE -- "$3" <<<"$2" || { printf '%s\n' "$2" >&2; fail "$1: no match for /$3/"; }
}
passed=0
ok() { passed=$((passed + 1)); log "ok - $*"; }

# 3. The plugin and the marketplace.
fresh_home
out="$(cd "$ROOT" && claude plugin validate --strict . 2>&1)" || { echo "$out" >&2; fail "claude plugin validate --strict ."; }
out="$(cd "$ROOT" && claude plugin validate --strict .claude-plugin/plugin.json 2>&1)" || { echo "$out" >&2; fail "plugin.json does not validate"; }
ok "claude plugin validate --strict passes (marketplace and plugin)"

out="$(claude plugin marketplace add "$ROOT" 2>&1)" || { echo "$out" >&2; fail "marketplace add"; }
out="$(claude plugin install massgen@massgen-mcp 2>&1)" || { echo "$out" >&2; fail "plugin install"; }
expect "plugin install" "$out" "Successfully installed plugin: massgen@massgen-mcp"
out="$(claude plugin details massgen 2>&1)"
expect "plugin details: skills and commands" "$out" "Skills \(6\)  checkpoint, massgen-run, run, status, team, team-run"
expect "plugin details: server" "$out" "MCP servers \(1\)  massgen"
ok "marketplace add + plugin install from the local path; details list the skills, /massgen:run|team|status and the server"

proj="$(mktemp -d "$WORK/proj.XXXXXX")"
out="$(cd "$proj" && claude mcp list 2>&1)"
expect "plugin server connects" "$out" "plugin:massgen:massgen: .*Connected"
ok "the plugin's server connects (massgen-mcp from PATH)"

out="$(cd "$proj" && PATH="/usr/bin:/bin" timeout 120 "$CLAUDE" mcp list </dev/null 2>&1 || true)"
expect "plugin server without massgen-mcp on PATH" "$out" "plugin:massgen:massgen: .*(Failed|failed)"
ok "without massgen-mcp on PATH the plugin's server fails (its stderr says how to install it)"

# install claude-code beside the enabled plugin would make two identical
# servers: it reads the plugin's state where the real CLI wrote it.
if out="$(cd "$proj" && massgen-mcp install claude-code 2>&1)"; then echo "$out" >&2; fail "install claude-code beside the enabled plugin was not refused"; fi
expect "install beside the plugin" "$out" "massgen@massgen-mcp plugin is enabled in Claude Code"
ok "install claude-code refuses beside the enabled plugin (enabledPlugins as the real CLI writes it)"

# 4. install claude-code, user scope.
fresh_home
echo '{"firstStartTime": "2026-01-01T00:00:00.000Z", "numStartups": 3}' >"$HOME/.claude.json"
before="$(sum "$HOME/.claude.json")"
out="$(massgen-mcp install claude-code --scope user)"
expect "install claude-code" "$out" "updated: $HOME/.claude.json"
after="$(sum "$HOME/.claude.json")"
out="$(massgen-mcp install claude-code --scope user)"
expect "second install" "$out" "nothing to change"
[ "$(sum "$HOME/.claude.json")" = "$after" ] || fail "a second install changed ~/.claude.json"
ok "install claude-code is idempotent"
massgen-mcp uninstall claude-code --scope user >/dev/null
[ "$(sum "$HOME/.claude.json")" = "$before" ] || fail "uninstall did not restore ~/.claude.json byte for byte"
ok "uninstall claude-code restores ~/.claude.json byte for byte"

massgen-mcp install claude-code --scope user >/dev/null
out="$(cd "$proj" && claude mcp list 2>&1)"
expect "claude mcp list (user scope)" "$out" "^massgen: massgen-mcp serve - .*Connected"
ok "after install claude-code --scope user, claude mcp list shows massgen connected"
massgen-mcp uninstall claude-code --scope user >/dev/null
out="$(cd "$proj" && claude mcp list 2>&1)"
if grep -q '^massgen:' <<<"$out"; then echo "$out" >&2; fail "massgen still listed after uninstall"; fi
ok "after uninstall (Claude Code had rewritten the file meanwhile) only the entry is gone"

# 5. install claude-code, project scope: awaiting the user's approval.
fresh_home
proj="$(mktemp -d "$WORK/proj.XXXXXX")"
(cd "$proj" && massgen-mcp install claude-code --scope project >/dev/null)
out="$(cd "$proj" && claude mcp list 2>&1)"
expect "claude mcp list (project scope)" "$out" "^massgen: massgen-mcp serve - .*Pending approval"
ok "after install claude-code --scope project, the server awaits the user's approval"
(cd "$proj" && massgen-mcp uninstall claude-code --scope project >/dev/null)
[ ! -e "$proj/.mcp.json" ] || fail "uninstall left the .mcp.json it created"
ok "uninstall deletes the .mcp.json it created"

# 6. install codex.
fresh_home
mkdir -p "$HOME/.codex"
printf '# my settings\nmodel = "gpt-5.4"  # pinned\n\n[features]\nplugins = false\n\n[analytics]\nenabled = false\n' >"$HOME/.codex/config.toml"
before="$(sum "$HOME/.codex/config.toml")"
OPENAI_API_KEY="sk-clients-not-a-key-0000" massgen-mcp install codex >/dev/null
grep -q 'sk-clients-not-a-key-0000' "$HOME/.codex/config.toml" && fail "a key value was written to config.toml"
grep -q '^# my settings$' "$HOME/.codex/config.toml" || fail "install lost a comment"
out="$(codex mcp list)"
expect "codex mcp list" "$out" "^massgen +massgen-mcp +serve +OPENAI_API_KEY=\*+ .*enabled"
ok "after install codex, codex mcp list shows massgen (env_vars by name, the value never written)"
after="$(sum "$HOME/.codex/config.toml")"
out="$(OPENAI_API_KEY="sk-clients-not-a-key-0000" massgen-mcp install codex)"
expect "second install codex" "$out" "nothing to change"
[ "$(sum "$HOME/.codex/config.toml")" = "$after" ] || fail "a second install changed config.toml"
ok "install codex is idempotent"
massgen-mcp uninstall codex >/dev/null
[ "$(sum "$HOME/.codex/config.toml")" = "$before" ] || fail "uninstall did not restore config.toml byte for byte"
out="$(codex mcp list)"
if grep -q '^massgen ' <<<"$out"; then fail "codex still lists massgen"; fi
ok "uninstall codex restores config.toml byte for byte"

# 6b. install gemini: the real Gemini CLI's `mcp list` connects the entry, in
#     a folder the user trusted (0.61 lists even a user-level server as
#     Disabled in one not trusted, which install's note says).
fresh_home
mkdir -p "$HOME/.gemini"
printf '{\n  // mine\n  "ui": {"theme": "GitHub"}\n}\n' >"$HOME/.gemini/settings.json"
before="$(sum "$HOME/.gemini/settings.json")"
out="$(GEMINI_API_KEY="dummy-clients-not-a-key-0000" massgen-mcp install gemini 2>&1)"
expect "install gemini's note" "$out" "only in folders you have trusted"
grep -q 'dummy-clients-not-a-key-0000' "$HOME/.gemini/settings.json" && fail "a key value was written to settings.json"
grep -q '// mine' "$HOME/.gemini/settings.json" || fail "install lost a comment"
proj="$(mktemp -d "$WORK/proj.XXXXXX")"
out="$(cd "$proj" && gemini mcp list)"
expect "gemini mcp list in an untrusted folder" "$out" "massgen: massgen-mcp serve \(stdio\) - Disabled"
printf '{"%s": "TRUST_FOLDER"}\n' "$proj" >"$HOME/.gemini/trustedFolders.json"
out="$(cd "$proj" && gemini mcp list)"
expect "gemini mcp list in a trusted folder" "$out" "massgen: massgen-mcp serve \(stdio\) - Connected"
ok "after install gemini, gemini mcp list shows massgen connected in a trusted folder (Disabled, as the note says, elsewhere)"
after="$(sum "$HOME/.gemini/settings.json")"
out="$(GEMINI_API_KEY="dummy-clients-not-a-key-0000" massgen-mcp install gemini)"
expect "second install gemini" "$out" "nothing to change"
[ "$(sum "$HOME/.gemini/settings.json")" = "$after" ] || fail "a second install changed settings.json"
massgen-mcp uninstall gemini >/dev/null
[ "$(sum "$HOME/.gemini/settings.json")" = "$before" ] || fail "uninstall did not restore settings.json byte for byte"
out="$(cd "$proj" && gemini mcp list)"
if grep -q 'massgen:' <<<"$out"; then fail "gemini still lists massgen"; fi
ok "install gemini is idempotent; uninstall restores settings.json byte for byte"

# 7. A real sim run through the plugin's slash command: the real claude CLI,
#    its model played by the fake Anthropic API (providers/fake), which calls
#    the plugin's run_team tool; the team and its result are real. Its sims
#    never err (accuracy=1): at their usual accuracy about one run in twenty
#    agreed on a wrong product, and seeding the specs does not fix that (the
#    session's own seed varies too).
fresh_home
out="$(claude plugin marketplace add "$ROOT" 2>&1)" || { echo "$out" >&2; fail "marketplace add (for the slash command's run)"; }
out="$(claude plugin install massgen@massgen-mcp 2>&1)" || { echo "$out" >&2; fail "plugin install (for the slash command's run)"; }
cat >"$WORK/script.json" <<'JSON'
{"models": {"claude-fake": [
  {"kind": "tool_call", "tool": "mcp__plugin_massgen_massgen__run_team",
   "input": {"task": "What is 17 * 23?", "models": ["sim/strong:accuracy=1", "sim/strong:accuracy=1", "sim:accuracy=1"], "wait": true}},
  {"kind": "text", "content": "The team agreed on 391 (3 of 3 votes)."}]},
 "always": {"claude-fake": {"kind": "text", "content": "Done."}}}
JSON
massgen-mcp fake-providers --listen 127.0.0.1:0 --script "$WORK/script.json" >"$WORK/fake.out" 2>"$WORK/fake.err" &
FAKE_PID=$!
# 90 s, as the e2e tests' starts get: beside CI's race builds a start is slow;
# fakes that exit end the wait at once.
up_by=$((SECONDS + 90))
while [ "$SECONDS" -lt "$up_by" ] && kill -0 "$FAKE_PID" 2>/dev/null; do
  grep -q ANTHROPIC_BASE_URL "$WORK/fake.out" 2>/dev/null && break
  sleep 0.1
done
base="$(sed -n 's/^export ANTHROPIC_BASE_URL=//p' "$WORK/fake.out")"
[ -n "$base" ] || fail "the fake providers did not start"
proj="$(mktemp -d "$WORK/proj.XXXXXX")"
# claude -p connects the plugin's server in the background and waits about
# 2 s for it before the first turn, then goes on without its tools; CI's
# parallel race lanes have outlasted that (the model's run_team call then met
# "No such tool available"). MCP_CONNECTION_NONBLOCKING=0 makes it wait
# MCP_CONNECT_TIMEOUT_MS (5 s by default), and MCP_TIMEOUT (30 s by default)
# bounds the connection itself. README says the same to users on a busy machine.
(cd "$proj" && ANTHROPIC_BASE_URL="$base" ANTHROPIC_API_KEY=sk-fake-not-a-key-0000 CLAUDE_CODE_MAX_RETRIES=1 \
  MCP_CONNECTION_NONBLOCKING=0 MCP_CONNECT_TIMEOUT_MS=60000 MCP_TIMEOUT=60000 timeout 180 "$CLAUDE" \
  -p "/massgen:run with sim/strong, sim/strong and sim: What is 17 * 23?" --model claude-fake \
  --output-format stream-json --verbose --allowedTools mcp__plugin_massgen_massgen__run_team \
  </dev/null >"$WORK/slash-run.jsonl" 2>"$WORK/slash-run.err") || { tail -20 "$WORK/slash-run.err" >&2; fail "claude -p /massgen:run"; }
out="$(cat "$WORK/slash-run.jsonl")"
expect "slash command offered" "$out" '"massgen:run"'
expect "the plugin's server connected before the first turn" "$(grep '"subtype":"init"' <<<"$out")" '"name":"plugin:massgen:massgen","status":"connected"'
expect "run_team called" "$out" '"name":"mcp__plugin_massgen_massgen__run_team"'
expect "team finished" "$out" '\\"status\\":\\"finished\\"'
expect "the team's answer" "$out" 'Answer: 391'
cp "$WORK/slash-run.jsonl" "$PREFIX/last-slash-run.jsonl"
ok "/massgen:run through the real claude CLI runs a real sim team via the plugin's server (stream in .cache/clients/last-slash-run.jsonl)"

log "$passed passed, 0 failed"
echo "$passed passed, 0 failed"
