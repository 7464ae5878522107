// The MCP Inspector CLI (@modelcontextprotocol/inspector 2.12.0) against the
// built binary: tools/list with --strict, which lints every tool schema for
// portability and exits 6 on an error-severity finding.
//   inspector --cli --strict --method tools/list --format json -- <bin> serve --state-dir DIR
// The mode flag must come first; `--` keeps the server's own flags away from
// the Inspector's parser. HOME is a temp dir so the Inspector's catalog and
// secret store (~/.mcp-inspector) never touch the real home.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { join } from "node:path";

import { E2E_DIR, BIN, TOOLS, assertBinary, freshStateDir, httpServer } from "../lib/harness.mjs";

const INSPECTOR = join(E2E_DIR, "node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js");

function inspector(args, { timeout = 60_000 } = {}) {
  return new Promise((resolve, reject) => {
    const home = freshStateDir("inspector-home");
    const p = spawn(process.execPath, [INSPECTOR, "--cli", ...args], {
      env: { ...process.env, HOME: home, CI: "true", NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "", err = "";
    p.stdout.on("data", (b) => (out += b));
    p.stderr.on("data", (b) => (err += b));
    const timer = setTimeout(() => p.kill("SIGKILL"), timeout);
    p.on("error", reject);
    p.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, out, err });
    });
  });
}

function checkToolsList(r, what, t) {
  assert.equal(
    r.code,
    0,
    `inspector ${what} exited ${r.code ?? r.signal} (6 = schema portability error under --strict)\n--- stderr ---\n${r.err.slice(-6000)}\n--- stdout ---\n${r.out.slice(0, 3000)}`,
  );
  const env = JSON.parse(r.out);
  const names = env.result.tools.map((x) => x.name);
  for (const want of TOOLS) assert.ok(names.includes(want), `${what}: tools/list lacks ${want}`);
  const findings = env.schemaFindings ?? [];
  // Input schemas are what a client's model fills in, and Gemini's schema
  // dialect refuses type unions: not one finding. No tool publishes an
  // output schema (mcp/results.go), so the nulls they held are gone too.
  const all = findings.flatMap((tool) => (tool.findings ?? []).map((f) => `${tool.toolName}: ${f.severity} ${f.rule} ${f.schema}.${f.path}`));
  assert.deepEqual(all, [], `${what}: the Inspector flags ${all.length} schema finding(s)`);
  for (const tool of env.result.tools) assert.equal(tool.outputSchema, undefined, `${what}: ${tool.name} publishes an output schema`);
  const count = all.length;
  t.diagnostic(`${what}: ${names.length} tools, ${count} schema finding(s)`);
  for (const tool of findings) {
    const list = (tool.findings ?? []).map((f) => `${f.severity} ${f.rule} ${f.schema}.${f.path}`);
    t.diagnostic(`  ${tool.toolName}: ${list.join("; ")}`);
  }
}

describe("inspector --cli --strict", { timeout: 180_000 }, () => {
  it("tools/list over stdio passes --strict", async (t) => {
    assertBinary();
    const r = await inspector(["--strict", "--method", "tools/list", "--format", "json", "--", BIN, "serve", "--state-dir", freshStateDir("inspector")]);
    checkToolsList(r, "stdio", t);
  });

  it("tools/call list_backends over stdio returns structured content", async () => {
    assertBinary();
    const r = await inspector(["--method", "tools/call", "--tool-name", "list_backends", "--tool-args-json", "{}", "--format", "json", "--", BIN, "serve", "--state-dir", freshStateDir("inspector")]);
    assert.equal(r.code, 0, `exit ${r.code}\n${r.err.slice(-4000)}`);
    const env = JSON.parse(r.out);
    assert.ok(env.result.structuredContent && typeof env.result.structuredContent === "object", `no structuredContent: ${r.out.slice(0, 1500)}`);
  });

  describe("over HTTP", () => {
    let srv;
    before(async () => {
      srv = await httpServer();
    });
    after(async () => {
      await srv?.stop();
    });
    for (const era of ["legacy", "modern"]) {
      it(`tools/list over HTTP (${era} era) passes --strict`, async (t) => {
        const r = await inspector(["--strict", "--method", "tools/list", "--format", "json", "--protocol-era", era, srv.url]);
        checkToolsList(r, `http/${era}`, t);
      });
    }
  });
});
