// The web view across its server's life, in headless Chromium (as
// webui.test.mjs drives it): a list longer than one page of the API, a
// session that failed, one cancelled and resumed from its page, and a page
// whose server restarted under it (which logs every browser out, the logins
// being in the server's memory).
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { cpSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";

import { chromium } from "playwright-core";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

import { BIN, assertBinary, awaitStart, freePort, freshStateDir, healthy, sleep, textOf } from "../lib/harness.mjs";

const TOKEN = "dummy-webui-lifecycle-token-not-a-key";
const CHROMIUM = process.env.MASSGEN_E2E_CHROMIUM || "/usr/bin/chromium";
// More sessions than the list API's page (webui/api.go pageSize, 100).
const SESSIONS = 105;
// An agent whose every step fails as a refused key: two of them drop out
// and the session fails (agents_failed).
const FAILING = JSON.stringify([
  { action: "error", class: "auth", content: "HTTP 401: invalid API key" },
  { action: "error", class: "auth", content: "HTTP 401: invalid API key" },
]);

// copySession makes session `to` from session `from` of the file store: the
// same ledger under another id, so a long list costs no runs.
function copySession(sessions, from, to) {
  cpSync(join(sessions, from), join(sessions, to), { recursive: true });
  const walk = (dir) => {
    for (const name of readdirSync(dir)) {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (name.endsWith(".json") || name.endsWith(".jsonl")) writeFileSync(p, readFileSync(p, "utf8").replaceAll(from, to));
    }
  };
  walk(join(sessions, to));
}

describe("the web view across its server's life", { timeout: 180_000 }, () => {
  let proc, port, base, state, browser;
  const log = [];

  async function startServer() {
    proc = spawn(BIN, ["serve", "--http", `127.0.0.1:${port}`, "--state-dir", state], {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, MASSGEN_MCP_TOKEN: TOKEN },
    });
    proc.stderr.on("data", (b) => log.push(b.toString()));
    await awaitStart("the server", proc, () => healthy(base), () => log.join(""));
  }

  before(async () => {
    assertBinary();
    state = freshStateDir("webui-life");
    const run = spawnSync(BIN, ["run", "--state-dir", state, "--json", "--session-id", "first", "--models", "sim,sim", "What is 2+2?"], { env: { ...process.env, MASSGEN_MCP_TOKEN: "" } });
    // 0 agreed, 7 finished with the votes split: two sims keyed by what each
    // saw split about 1 run in 20 here; either is the finished session the
    // page tests need (any other status is a run that failed).
    assert.ok([0, 7].includes(run.status), `the first session's run failed (exit ${run.status}):\n${run.stderr}`);
    // first, failed and the copies.
    for (let i = 1; i < SESSIONS - 1; i++) copySession(join(state, "sessions"), "first", `copy-${String(i).padStart(3, "0")}`);
    const failing = join(state, "failing.json");
    writeFileSync(failing, FAILING);
    const failed = spawnSync(BIN, ["run", "--state-dir", state, "--json", "--session-id", "failed", "--models", `sim/script:file=${failing},sim/script:file=${failing}`, "What is 2+2?"], { env: { ...process.env, MASSGEN_MCP_TOKEN: "" } });
    assert.notEqual(failed.status, 0, `the failing session's run did not fail:\n${failed.stdout}`);
    port = await freePort();
    base = `http://127.0.0.1:${port}`;
    await startServer();
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"] });
  });
  after(async () => {
    await browser?.close();
    proc?.kill("SIGTERM");
  });

  async function loggedIn() {
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const p = await ctx.newPage();
    await p.goto(`${base}/ui/login`);
    await p.fill("#token", TOKEN);
    await Promise.all([p.waitForURL(`${base}/ui/`), p.click("button[type=submit]")]);
    return p;
  }

  it("pages through more sessions than one answer of the list holds", async () => {
    const p = await loggedIn();
    await p.waitForSelector("#list-total:has-text('session')");
    assert.equal(await p.locator("tr[data-session]").count(), 100);
    assert.match(await p.locator("#list-total").textContent(), /^1–100 of 105 sessions$/);
    await p.click("#list-next");
    await p.waitForSelector("#list-total:has-text('101–105')");
    assert.equal(await p.locator("tr[data-session]").count(), SESSIONS - 100, "the rest of the sessions");
    assert.equal(await p.locator("#list-next").isHidden(), true, "no next page after the last");
    await p.click("#list-prev");
    await p.waitForSelector("#list-total:has-text('1–100')");
    await p.context().close();
  });

  it("says why a failed session has no final answer, not that one is coming", async () => {
    const p = await loggedIn();
    await p.goto(`${base}/ui/s/failed`);
    await p.waitForFunction(() => window.__massgen?.renders >= 1);
    assert.equal(await p.locator("#s-status").textContent(), "failed");
    const final = await p.locator("#final").textContent();
    assert.match(final, /^No final answer: the run ended/);
    assert.match(final, /agents_failed/);
    assert.doesNotMatch(await p.locator("#files").textContent(), /yet/);
    await p.context().close();
  });

  it("starts Cancel and Resume disabled until the first state says which applies", async () => {
    const p = await loggedIn();
    // The session's state never comes: the buttons are as the page starts.
    await p.route("**/ui/api/sessions/first", () => {});
    await p.goto(`${base}/ui/s/first`);
    await sleep(500);
    assert.deepEqual(await p.evaluate(() => [document.querySelector("#cancel").disabled, document.querySelector("#resume").disabled]), [true, true]);
    await p.context().close();
  });

  it("cancels and resumes from the page, each word gone once the run moves on", async () => {
    const mcp = new Client({ name: "massgen-e2e-webui-life", version: "0.0.0" }, { capabilities: {} });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } } }));
    const r = await mcp.callTool({ name: "run_team", arguments: { task: "What is 17 * 23?", models: ["sim:latency=5s", "sim:latency=5s", "sim:latency=5s"], wait: false } });
    assert.ok(!r.isError, textOf(r));
    const id = r.structuredContent.session_id;
    await mcp.close();
    const p = await loggedIn();
    await p.goto(`${base}/ui/s/${id}`);
    await p.waitForSelector("#cancel:not([disabled])");
    await p.click("#cancel");
    await p.waitForSelector("#action-msg:has-text('Cancelled.')");
    await p.waitForFunction(() => document.querySelector("#s-status")?.textContent === "cancelled", null, { timeout: 30_000 });
    // What is wrong is gathered, so one run shows each fault.
    const wrong = [];
    const final = await p.locator("#final").textContent();
    if (!/^No final answer: the run was cancelled/.test(final)) wrong.push(`a cancelled session's final answer reads ${JSON.stringify(final)}`);
    await p.waitForSelector("#resume:not([disabled])");
    await p.click("#resume");
    await p.waitForSelector("#action-msg:has-text('Resumed.')");
    await p.waitForFunction(() => ["finished", "failed"].includes(document.querySelector("#s-status")?.textContent), null, { timeout: 60_000 });
    await sleep(500);
    const msg = await p.locator("#action-msg").textContent();
    if (msg !== "") wrong.push(`once the resumed run has ended, the buttons still say ${JSON.stringify(msg)}`);
    assert.deepEqual(wrong, []);
    await p.context().close();
  });

  it("tells a page whose server restarted (logging it out) to log in again", async () => {
    const p = await loggedIn();
    await p.goto(`${base}/ui/s/first`);
    await p.waitForFunction(() => window.__massgen?.renders >= 1);
    proc.kill("SIGKILL");
    await new Promise((r) => proc.once("exit", r));
    await sleep(1500);
    await startServer();
    await p.waitForFunction(() => /log in again/.test(document.querySelector("#s-live")?.textContent ?? ""), null, { timeout: 30_000 }).catch(async (e) => {
      throw new Error(`the page never said to log in again: ${await p.locator("#s-live").textContent()} (${e.message})`);
    });
    assert.doesNotMatch(await p.locator("#s-live").textContent(), /too many/);
    assert.equal(await p.locator("#s-live a").getAttribute("href"), "/ui/login");
    await p.context().close();
  });
});
