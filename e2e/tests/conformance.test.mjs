// The official conformance suite (@modelcontextprotocol/conformance) against
// `serve --http`. Server scenarios are HTTP-only. Two pinned versions:
//   0.1.16          server-initialize, ping, tools-list, dns-rebinding-protection
//   0.2.0-alpha.12  http-header-validation, server-stateless (2026-07-28)
// The other scenarios need the suite's fixture tools (test_*), which a real
// server does not have. e2e/conformance-baseline.yml may excuse single checks
// (scenario:check-id), each with its reason; the CLI itself enforces it: an
// unlisted failure fails, and so does a listed check that now passes (stale).
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readdirSync, readFileSync, existsSync } from "node:fs";
import { join } from "node:path";

import { E2E_DIR, freshStateDir, httpServer } from "../lib/harness.mjs";

const BASELINE = join(E2E_DIR, "conformance-baseline.yml");
const SUITES = [
  {
    version: "0.1.16",
    cli: join(E2E_DIR, "node_modules/@modelcontextprotocol/conformance/dist/index.js"),
    scenarios: ["server-initialize", "ping", "tools-list", "dns-rebinding-protection"],
  },
  {
    version: "0.2.0-alpha.12",
    cli: join(E2E_DIR, "node_modules/conformance-next/dist/index.js"),
    scenarios: ["http-header-validation", "server-stateless"],
  },
];

function run(cli, args, timeout) {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [cli, ...args], {
      env: { ...process.env, NO_COLOR: "1", FORCE_COLOR: "0", CI: "true" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    p.stdout.on("data", (b) => (out += b));
    p.stderr.on("data", (b) => (out += b));
    const timer = setTimeout(() => p.kill("SIGKILL"), timeout);
    p.on("error", reject);
    p.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, out });
    });
  });
}

function readChecks(dir) {
  const checks = [];
  const walk = (d) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name === "checks.json") checks.push(...JSON.parse(readFileSync(p, "utf8")));
    }
  };
  if (existsSync(dir)) walk(dir);
  return checks;
}

// eslint-disable-next-line no-control-regex
const stripAnsi = (s) => s.replace(/\x1b\[[0-9;]*m/g, "");

describe("conformance server", { timeout: 600_000 }, () => {
  let srv;
  before(async () => {
    srv = await httpServer();
  });
  after(async () => {
    await srv?.stop();
  });
  for (const suite of SUITES) {
    for (const scenario of suite.scenarios) {
      it(`${suite.version} ${scenario}`, { timeout: 120_000 }, async (t) => {
        const out = freshStateDir(`conformance-${scenario}`);
        const args = ["server", "--url", srv.url, "--scenario", scenario, "-o", out, "--expected-failures", BASELINE];
        if (suite.version.startsWith("0.2")) args.push("--timeout", "60000");
        const r = await run(suite.cli, args, 110_000);
        const checks = readChecks(out);
        const bad = checks.filter((c) => c.status === "FAILURE");
        const warn = checks.filter((c) => c.status === "WARNING");
        t.diagnostic(
          `${checks.filter((c) => c.status === "SUCCESS").length}/${checks.length} checks passed, ` +
            `${bad.length} failed, ${warn.length} warnings, ${checks.filter((c) => c.status === "SKIPPED").length} skipped`,
        );
        for (const c of [...bad, ...warn]) {
          t.diagnostic(`  ${c.status} ${scenario}:${c.id} — ${c.errorMessage || c.description}`);
        }
        const tail = stripAnsi(r.out).split("\n").filter((l) => /baseline|unexpected|stale|expected failure|FAILURE|Error/i.test(l)).slice(-30).join("\n");
        assert.ok(checks.length > 0, `no checks.json written (exit ${r.code ?? r.signal})\n${stripAnsi(r.out).slice(-4000)}`);
        assert.equal(
          r.code,
          0,
          `conformance ${suite.version} ${scenario} exited ${r.code ?? r.signal}. Failing checks:\n` +
            bad.map((c) => `  ${scenario}:${c.id} — ${c.errorMessage || c.description}`).join("\n") +
            `\n--- runner ---\n${tail}`,
        );
      });
    }
  }
});
