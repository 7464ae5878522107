// The web view (issue 34) in headless Chromium (Debian's, driven by
// playwright-core with executablePath): a sim team started over MCP watched
// from /ui/ — cards, vote arrows and the winner at start, mid-run and
// finished, updates by server-sent events without a reload, a cancel from
// the page, an unauthenticated and an other-tenant browser seeing nothing,
// an API agent's ask (scripted by the fake providers) answered from the page,
// the winner's files opened and downloaded as a zip, and a seeded 16-agent
// session of 200+ steps (the same one every run, made by `massgen-mcp run
// --parallel 1 --seed`) rendered and timed. Screenshots go to
// e2e/artifacts/webui/ (gitignored), kept as the run's artifacts.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { inflateRawSync } from "node:zlib";

import { chromium } from "playwright-core";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

import { BIN, E2E_DIR, assertBinary, awaitStart, freePort, freshStateDir, sleep, textOf } from "../lib/harness.mjs";

const ALICE = "dummy.alice.webui.token.not.a.secret";
const BOB = "dummy.bob.webui.token.not.a.secret";
const CHROMIUM = process.env.MASSGEN_E2E_CHROMIUM || "/usr/bin/chromium";
const SHOTS = join(E2E_DIR, "artifacts", "webui");
const SLOW = "sim:latency=5s:price_in=1:price_out=2";

// The fake OpenAI API's script: gpt-5-mini asks to push (an external action,
// so under the workspace role a person is asked) and then answers; it votes
// unscripted, for the first answer.
const FAKE_SCRIPT = {
  models: {
    "gpt-5-mini": [
      { kind: "tool_call", tool: "run_command", input: { command: "git push origin main" } },
      { kind: "new_answer", content: "Pushed, once a person allowed it." },
    ],
  },
};
// The team whose agent asks: its tools and rules are the operator's, so it
// is a team file under --teams-dir. sandbox: none, so the ask does not
// depend on bubblewrap here; the push itself fails harmlessly (no remote).
const ASKS_TEAM = `agents:
  - id: pusher
    model: openai/gpt-5-mini
    allowed_tools: [run_command]
    sandbox: none
    permissions:
      approval_timeout_seconds: 120
`;

// The big session: 16 sim agents, one step at a time with a fixed seed, so
// the ledger (and its step count) is the same on every run.
const BIG_SEED = "7";
const BIG_MODEL = "sim:revise=1:conformity=0:accuracy=0.5:price_in=1:price_out=2";

// fakeProviders starts `massgen-mcp fake-providers` with a script and
// returns its process and the environment it prints (base URLs, dummy keys).
async function fakeProviders(scriptPath) {
  const proc = spawn(BIN, ["fake-providers", "--script", scriptPath], { stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  proc.stdout.on("data", (b) => { out += b.toString(); });
  await awaitStart("fake-providers", proc, () => out.includes("# end of exports"), () => out);
  const env = {};
  for (const line of out.split("\n")) {
    const m = line.match(/^export ([A-Z0-9_]+)=(.*)$/);
    if (m) env[m[1]] = m[2].startsWith("'") ? m[2].slice(1, -1).replaceAll("'\\''", "'") : m[2];
  }
  return { proc, env };
}

// unzip reads a zip's entries (stored or deflated) from its central
// directory: name → content.
function unzip(buf) {
  let eocd = buf.length - 22;
  while (eocd >= 0 && buf.readUInt32LE(eocd) !== 0x06054b50) eocd--;
  assert.ok(eocd >= 0, "not a zip: no end of central directory");
  const count = buf.readUInt16LE(eocd + 10);
  let p = buf.readUInt32LE(eocd + 16);
  const out = new Map();
  for (let i = 0; i < count; i++) {
    assert.equal(buf.readUInt32LE(p), 0x02014b50, "a central directory entry");
    const method = buf.readUInt16LE(p + 10), size = buf.readUInt32LE(p + 20);
    const nameLen = buf.readUInt16LE(p + 28), extraLen = buf.readUInt16LE(p + 30), commentLen = buf.readUInt16LE(p + 32);
    const local = buf.readUInt32LE(p + 42);
    const name = buf.subarray(p + 46, p + 46 + nameLen).toString("utf8");
    const data = local + 30 + buf.readUInt16LE(local + 26) + buf.readUInt16LE(local + 28);
    const raw = buf.subarray(data, data + size);
    out.set(name, (method === 8 ? inflateRawSync(raw) : raw).toString("utf8"));
    p += 46 + nameLen + extraLen + commentLen;
  }
  return out;
}

describe("the web view in a browser", { timeout: 300_000 }, () => {
  let proc, base, browser, alice, loginLink, state, fakes, bigId, bigSteps;
  const log = [];

  before(async () => {
    assertBinary();
    assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is missing: apt-get install -y chromium (or set MASSGEN_E2E_CHROMIUM)`);
    mkdirSync(SHOTS, { recursive: true });
    state = freshStateDir("webui");
    const conf = freshStateDir("webui-conf");
    const tokens = join(conf, "tokens");
    writeFileSync(tokens, `alice ${ALICE}\nbob ${BOB}\n`);
    writeFileSync(join(conf, "script.json"), JSON.stringify(FAKE_SCRIPT));
    mkdirSync(join(conf, "teams"));
    writeFileSync(join(conf, "teams", "asks.yaml"), ASKS_TEAM);
    fakes = await fakeProviders(join(conf, "script.json"));
    // The big session, made before the server starts, in its state
    // directory (the default tenant's): seeded and one step at a time.
    // Unanimity is never reached (exit 7: the votes stayed split), which
    // is what makes it long.
    const big = spawnSync(BIN, ["run", "--state-dir", state, "--json", "--parallel", "1", "--seed", BIG_SEED, "--consensus", "unanimous",
      "--max-answers", "14", "--max-rounds", "30", "--models", Array(16).fill(BIG_MODEL).join(","), "What is 2+2?"],
      { env: { ...process.env, MASSGEN_MCP_TOKEN: "" }, maxBuffer: 64 << 20 });
    assert.ok([0, 7].includes(big.status), `the big session's run exited ${big.status}:\n${big.stderr}`);
    ({ session_id: bigId, steps: bigSteps } = JSON.parse(big.stdout.toString()));
    const port = await freePort();
    proc = spawn(BIN, ["serve", "--http", `127.0.0.1:${port}`, "--state-dir", state, "--tokens-file", tokens, "--teams-dir", join(conf, "teams")], {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, ...fakes.env, MASSGEN_MCP_TOKEN: "" },
    });
    proc.stderr.on("data", (b) => log.push(b.toString()));
    base = `http://127.0.0.1:${port}`;
    await awaitStart("the server", proc, () => {
      loginLink = log.join("").match(/one-time login link\): (\S+)/)?.[1];
      return loginLink !== undefined;
    }, () => log.join(""));
    alice = new Client({ name: "massgen-e2e-webui", version: "0.0.0" }, { capabilities: {} });
    await alice.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${ALICE}` } } }));
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"] });
  });
  after(async () => {
    await browser?.close();
    await alice?.close();
    proc?.kill("SIGTERM");
    fakes?.proc.kill("SIGTERM");
    await Promise.race([new Promise((r) => proc.once("exit", r)), sleep(5000)]);
  });

  // page opens a browser context at a viewport, with every console error
  // and page error collected.
  async function page(viewport = { width: 1280, height: 800 }) {
    const ctx = await browser.newContext({ viewport });
    const p = await ctx.newPage();
    p.errors = [];
    p.on("console", (m) => { if (m.type() === "error") p.errors.push(m.text()); });
    p.on("pageerror", (e) => p.errors.push(String(e)));
    return p;
  }

  async function login(p, token) {
    await p.goto(`${base}/ui/login`);
    await p.fill("#token", token);
    await Promise.all([p.waitForURL(`${base}/ui/`), p.click("button[type=submit]")]);
  }

  async function start(models, extra = {}) {
    const r = await alice.callTool({ name: "run_team", arguments: { task: "What is 17 * 23?", models, wait: false, ...extra } });
    assert.ok(!r.isError, textOf(r));
    return r.structuredContent.session_id;
  }

  it("shows a team live: cards and arrows at start, mid-run and finished, by events without a reload", async () => {
    const p = await page();
    await login(p, ALICE);
    const id = await start([SLOW, SLOW, SLOW]);
    await p.goto(`${base}/ui/s/${id}`);
    await p.evaluate(() => { window.__notReloaded = true; });
    await p.waitForSelector(".card[data-agent]");
    assert.equal(await p.locator(".card[data-agent]").count(), 3, "three agent cards at start");
    assert.equal(await p.locator("#map svg g.cm-node").count(), 3, "three nodes on the map at start");
    await p.screenshot({ path: join(SHOTS, "start-1280.png"), fullPage: true });

    // Mid-run: an answer on the page while the team still runs (the page
    // records every state it drew, so a slow screenshot cannot miss it).
    await p.waitForFunction(() => window.__massgen.seen.some((s) => s.status === "running" && s.answers > 0), null, { timeout: 90_000 });
    if ((await p.locator("#s-status").textContent()) === "running") await p.screenshot({ path: join(SHOTS, "midrun-1280.png"), fullPage: true });

    await p.waitForFunction(() => document.querySelector("#s-status")?.textContent === "finished", null, { timeout: 90_000 });
    assert.ok(await p.evaluate(() => window.__notReloaded === true), "the page was updated in place, not reloaded");
    assert.ok(await p.evaluate(() => window.__massgen.renders) >= 3, "several states arrived by events");
    assert.equal(await p.locator("#map svg g.cm-winner").count(), 1, "the winner is outlined on the map");
    assert.ok(await p.locator("#map svg path.cm-vote").count() >= 2, "vote arrows drawn");
    assert.equal(await p.locator(".card.winner").count(), 1, "the winner's card is marked");
    assert.match(await p.locator("#s-cost").textContent(), /^\$0\.\d{4}$/);
    assert.notEqual(await p.locator("#s-cost").textContent(), "$0.0000", "the cost grew");
    assert.match(await p.locator("#final").innerHTML(), /<p>/, "the final answer is rendered");
    await p.screenshot({ path: join(SHOTS, "finished-1280.png"), fullPage: true });

    // Keyboard: the skip link is the first stop, the cards take focus.
    await p.keyboard.press("Tab");
    assert.equal(await p.evaluate(() => document.activeElement?.className), "skip");
    assert.equal(await p.evaluate(() => document.querySelector(".card").tabIndex), 0);

    // A phone's width: no sideways scroll of the page itself.
    await p.setViewportSize({ width: 390, height: 844 });
    await sleep(200);
    const overflow = await p.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 1, `the page scrolls sideways by ${overflow}px at a phone's width`);
    await p.screenshot({ path: join(SHOTS, "finished-phone.png"), fullPage: true });
    assert.deepEqual(p.errors, [], "no console errors");

    // The list: the session with its status and cost, filtered by status.
    await p.setViewportSize({ width: 1280, height: 800 });
    await p.goto(`${base}/ui/?status=finished`);
    await p.waitForSelector(`tr[data-session="${id}"]`);
    await p.goto(`${base}/ui/?status=cancelled`);
    await p.waitForSelector("#list-total:has-text('session')");
    assert.equal(await p.locator(`tr[data-session="${id}"]`).count(), 0, "the filter leaves a finished session out");
    await p.context().close();
  });

  it("places a follow-up turn in its conversation", async () => {
    const first = await alice.callTool({ name: "run_team", arguments: { task: "What is 2 + 2?", models: ["sim", "sim"], wait: true } }, undefined, { timeout: 120_000 });
    assert.ok(!first.isError, textOf(first));
    const prev = first.structuredContent.session_id;
    const id = await start(["sim", "sim"], { task: "And 3 + 3?", continue_from: prev });
    const p = await page();
    await login(p, ALICE);
    await p.goto(`${base}/ui/s/${id}`);
    await p.waitForSelector("#s-team:not([hidden])");
    assert.equal(await p.locator("#s-team").textContent(), `turn 2, continuing ${prev}`);
    assert.deepEqual(p.errors, [], "no console errors");
    await p.context().close();
  });

  it("cancels a team from the page", async () => {
    const p = await page();
    await login(p, ALICE);
    const id = await start(["sim:latency=4s", "sim:latency=4s"]);
    await p.goto(`${base}/ui/s/${id}`);
    await p.waitForSelector("#cancel:not([disabled])");
    await p.click("#cancel");
    await p.waitForFunction(() => document.querySelector("#s-status")?.textContent === "cancelled", null, { timeout: 30_000 });
    const st = await alice.callTool({ name: "team_status", arguments: { session_id: id } });
    assert.match(textOf(st), /cancelled/, "the cancel reached the session");
    await p.screenshot({ path: join(SHOTS, "cancelled-1280.png"), fullPage: true });
    assert.deepEqual(p.errors, [], "no console errors");
    await p.context().close();
  });

  it("pauses live updates the server refuses and resumes them once a view closes", async () => {
    const id = await start(["sim:latency=4s", "sim:latency=4s"]);
    // Alice's other views: as many streams as a tenant may hold (32).
    // Each response is kept, not only its abort: Node's fetch cancels the
    // body of a Response the garbage collector takes, which closed a view
    // at a random moment and let the page in, or back, early (CI failed so
    // twice); the test collects garbage once they are open (e2e/run.sh
    // exposes gc) so a view dropped fails it every time. The earlier tests'
    // pages are closed, but the server lets their streams go only once it
    // reads the closed connections, which a loaded machine may not have
    // done yet: a view refused (429) is asked again until one goes, so all
    // 32 places are this test's.
    const views = [];
    for (let i = 0; i < 32; i++) {
      const ac = new AbortController();
      for (const deadline = Date.now() + 30_000; ;) {
        const r = await fetch(`${base}/ui/api/sessions/${id}/events`, { headers: { Authorization: `Bearer ${ALICE}` }, signal: ac.signal });
        if (r.status === 200) {
          views.push({ ac, r });
          break;
        }
        const why = await r.text();
        assert.ok(r.status === 429 && Date.now() < deadline, `view ${i + 1} of 32: ${r.status} ${why}`);
        await sleep(250);
      }
    }
    globalThis.gc?.();
    const p = await page();
    try {
      await login(p, ALICE);
      await p.goto(`${base}/ui/s/${id}`);
      // 30 s: CI's parallel lanes once kept a page under 15 s from
      // getting this far; a failure says what the page showed instead.
      await p.waitForFunction(() => /paused/.test(document.querySelector("#s-live")?.textContent ?? ""), null, { timeout: 30_000 }).catch(async (e) => {
        const shown = await p.evaluate(() => ({
          live: document.querySelector("#s-live")?.textContent,
          missing: document.querySelector("#missing")?.hidden === false ? document.querySelector("#missing-msg")?.textContent : null,
        }));
        throw new Error(`the page never said live updates were paused: ${JSON.stringify(shown)} (${e.message})`);
      });
      views.pop().ac.abort();
      // The page tries again after 10 s, without a reload.
      await p.waitForFunction(() => !/paused/.test(document.querySelector("#s-live")?.textContent ?? ""), null, { timeout: 30_000 }).catch(async (e) => {
        throw new Error(`the page stayed paused once a view closed: ${await p.locator("#s-live").textContent()} (${e.message})`);
      });
      await p.waitForFunction(() => document.querySelector("#s-status")?.textContent === "finished", null, { timeout: 60_000 });
    } finally {
      for (const v of views) v.ac.abort();
      await p.context().close();
    }
  });

  it("shows nothing to a browser without a login or of another tenant", async () => {
    const id = await start(["sim", "sim"]);
    const anon = await page();
    await anon.goto(`${base}/ui/s/${id}`);
    assert.equal(new URL(anon.url()).pathname, "/ui/login", "sent to the login page");
    assert.ok(!(await anon.content()).includes(id), "no trace of the session");
    const api = await anon.request.get(`${base}/ui/api/sessions/${id}`);
    assert.equal(api.status(), 401);
    await anon.screenshot({ path: join(SHOTS, "anonymous.png") });
    await anon.context().close();

    const bob = await page();
    await login(bob, BOB);
    await bob.waitForSelector("#list-total:has-text('session')");
    assert.equal(await bob.locator(`tr[data-session="${id}"]`).count(), 0, "bob's list lacks alice's session");
    await bob.goto(`${base}/ui/s/${id}`);
    await bob.waitForSelector("#missing:not([hidden])");
    assert.ok(!(await bob.content()).includes("17 * 23"), "no trace of alice's task");
    await bob.screenshot({ path: join(SHOTS, "other-tenant.png") });
    await bob.context().close();

    // The one-time link logs in the default tenant once.
    const first = await page();
    await first.goto(loginLink);
    assert.equal(new URL(first.url()).pathname, "/ui/");
    await first.context().close();
    const second = await page();
    const r = await second.goto(loginLink);
    assert.equal(r.status(), 403, "a spent link logs nobody in");
    await second.context().close();
  });

  it("answers an agent's ask from the page: shown live, allowed, gone, audited as the web's", async () => {
    const p = await page();
    await login(p, ALICE);
    const r = await alice.callTool({ name: "run_team", arguments: { task: "Publish the fix to origin.", team: "asks", wait: false } });
    assert.ok(!r.isError, textOf(r));
    const id = r.structuredContent.session_id;
    await p.goto(`${base}/ui/s/${id}`);
    await p.evaluate(() => { window.__notReloaded = true; });
    const ask = p.locator(".ask[data-request]");
    await ask.waitFor({ timeout: 60_000 });
    assert.match(await ask.textContent(), /pusher asks to git\(push origin main\)/);
    assert.ok(await p.evaluate(() => window.__notReloaded === true), "the ask arrived by an event, not a reload");
    assert.equal(await p.locator('.card[data-agent="pusher"] .waiting').count(), 1, "the asking agent's card says it waits");
    await p.screenshot({ path: join(SHOTS, "ask-1280.png"), fullPage: true });
    const request = await ask.getAttribute("data-request");
    await p.locator(".ask button.allow").click();
    await p.waitForSelector("#approvals-box[hidden]", { state: "attached", timeout: 30_000 });
    await p.waitForFunction(() => document.querySelector("#s-status")?.textContent === "finished", null, { timeout: 60_000 });
    const log = readFileSync(join(state, "tenants", "alice", "sessions", id, "permissions.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l));
    const rec = log.find((x) => x.tool === "run_command");
    assert.ok(rec, `no run_command decision in permissions.jsonl: ${JSON.stringify(log)}`);
    assert.equal(rec.outcome, "approved");
    assert.equal(rec.by, "file handshake (web)");
    assert.equal(rec.request, request);
    const audit = await p.locator("#perms-box:not([hidden])").textContent();
    assert.match(audit, /1 approved/);
    assert.match(audit, /pusher approved: git\(push origin main\) \(role workspace.*; file handshake \(web\)\)/);
    assert.deepEqual(p.errors, [], "no console errors");
    await p.context().close();
  });

  it("lists the winner's files, opens one, and downloads them as a zip", async () => {
    const p = await page();
    await login(p, ALICE);
    const r = await alice.callTool({ name: "run_team", arguments: { task: "Build a one-page landing site for a bakery", models: ["sim", "sim"], wait: true } }, undefined, { timeout: 120_000 });
    assert.ok(!r.isError, textOf(r));
    const id = r.structuredContent.session_id;
    await p.goto(`${base}/ui/s/${id}`);
    const links = p.locator("#files li a");
    await links.first().waitFor();
    const listed = await links.allTextContents();
    assert.ok(listed.length >= 1, "the winner's files are listed");
    await p.screenshot({ path: join(SHOTS, "files-1280.png"), fullPage: true });

    // One file, opened as the page links it (a new tab, as plain text).
    const [tab] = await Promise.all([p.context().waitForEvent("page"), links.first().click()]);
    await tab.waitForLoadState();
    const shown = await tab.evaluate(() => document.body.innerText);
    assert.ok(shown.length > 0, `${listed[0]} opened empty`);

    // The zip: every listed file, the opened one byte for byte.
    const [download] = await Promise.all([p.waitForEvent("download"), p.click("#files a[download]")]);
    assert.match(download.suggestedFilename(), /\.zip$/);
    const entries = unzip(readFileSync(await download.path()));
    assert.deepEqual([...entries.keys()].sort(), [...listed].sort(), "the zip holds exactly the listed files");
    assert.equal(entries.get(listed[0]).trim(), shown.trim(), "the zip's copy is the file the page showed");
    assert.deepEqual(p.errors, [], "no console errors");
    await tab.close();
    await p.context().close();
  });

  it("renders the seeded 16-agent session of 200+ steps without lag", async () => {
    assert.ok(bigSteps >= 200, `the seeded big session took ${bigSteps} steps, want 200 or more`);
    // The session is the default tenant's: a new one-time link from
    // ui-link (the first was spent above) logs this browser in.
    const link = execFileSync(BIN, ["ui-link", "--state-dir", state], { stdio: ["ignore", "pipe", "pipe"] }).toString().trim();
    assert.ok(link.startsWith(`${base}/ui/login?key=`), link);
    const p = await page();
    await p.goto(link);
    assert.equal(new URL(p.url()).pathname, "/ui/");
    const t0 = Date.now();
    await p.goto(`${base}/ui/s/${bigId}`);
    await p.waitForFunction(() => window.__massgen?.renders >= 1);
    const loaded = Date.now() - t0;
    const renderMs = await p.evaluate(() => Math.max(...window.__massgen.renderMs));
    assert.equal(await p.locator(".card[data-agent]").count(), 16);
    assert.equal(await p.locator("#map svg g.cm-node").count(), 16);
    assert.equal(Number(await p.locator("#s-steps").textContent()), bigSteps, "the page shows the seeded session's steps");
    console.log(`[webui] 16 agents, ${bigSteps} steps (seed ${BIG_SEED}), ${await p.locator("details.answer").count()} answers: render ${renderMs.toFixed(1)} ms, page to first render ${loaded} ms`);
    writeFileSync(join(SHOTS, "render-time.txt"), `agents=16 steps=${bigSteps} seed=${BIG_SEED} render_ms=${renderMs.toFixed(1)} load_to_render_ms=${loaded}\n`);
    // The viewport only: a full-page shot of 160 answers is slow to encode.
    await p.locator("#map").scrollIntoViewIfNeeded();
    await p.screenshot({ path: join(SHOTS, "sixteen-agents-1280.png"), timeout: 90_000 });
    // A generous ceiling: CI shares two cores with other suites.
    assert.ok(renderMs < 2000, `rendering took ${renderMs} ms`);
    assert.deepEqual(p.errors, [], "no console errors");
    await p.context().close();
  });
});
