#!/usr/bin/env bash
# Installs the real coding-agent CLIs that tests drive, pinned, into
# .cache/clients (once; a stamp names the versions): the CLI-agent tests in
# providers/cliagent/... (run by `make unit` with MASSGEN_REAL_CLIS=1) and
# e2e/clients.sh use them. Needs npm and the npm registry the first time.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CLAUDE_VERSION="${E2E_CLAUDE_VERSION:-2.1.197}"
CODEX_VERSION="${E2E_CODEX_VERSION:-0.171.0}"
GEMINI_VERSION="${E2E_GEMINI_VERSION:-0.61.0}"
PREFIX="$ROOT/.cache/clients"
STAMP="$PREFIX/.installed-$CLAUDE_VERSION-$CODEX_VERSION-$GEMINI_VERSION"
if [ -f "$STAMP" ] && [ -x "$PREFIX/node_modules/.bin/claude" ] && [ -x "$PREFIX/node_modules/.bin/codex" ] &&
  [ -x "$PREFIX/node_modules/.bin/gemini" ]; then
  exit 0
fi
printf '[install-clis] installing @anthropic-ai/claude-code@%s, @openai/codex@%s and @google/gemini-cli@%s into .cache/clients\n' \
  "$CLAUDE_VERSION" "$CODEX_VERSION" "$GEMINI_VERSION" >&2
mkdir -p "$PREFIX"
npm install --prefix "$PREFIX" --no-audit --no-fund --no-save --loglevel=error \
  "@anthropic-ai/claude-code@$CLAUDE_VERSION" "@openai/codex@$CODEX_VERSION" "@google/gemini-cli@$GEMINI_VERSION" </dev/null
touch "$STAMP"
