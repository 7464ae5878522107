// Shared plumbing for the end-to-end tests: where the binary is, fresh state
// directories, the HTTP server under test, and MCP clients (the v1 TypeScript
// SDK and the v2 @modelcontextprotocol/client) that record every message they
// receive, in order, plus every error the SDK reports.
//
// Environment:
//   MASSGEN_E2E_BIN  the binary under test (default: <repo>/bin/massgen-mcp)
//   MASSGEN_E2E_URL  a running `serve --http` endpoint (http://127.0.0.1:PORT/mcp);
//                    when unset, a file that needs HTTP starts its own server
//                    with a fresh state dir and stops it when the file ends.

import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, existsSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import assert from "node:assert/strict";

import { Client as V1Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport as V1Stdio } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport as V1HTTP } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema as V1ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { Client as V2Client, StreamableHTTPClientTransport as V2HTTP } from "@modelcontextprotocol/client";
import { StdioClientTransport as V2Stdio } from "@modelcontextprotocol/client/stdio";

export const E2E_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "..");
export const REPO = resolve(E2E_DIR, "..");
export const BIN = resolve(process.env.MASSGEN_E2E_BIN || join(REPO, "bin", "massgen-mcp"));

export const TOOLS = ["run_team", "start_team", "step", "team_status", "finalize_team", "cancel_team", "list_backends"];

// Calls can be slow on a loaded 2-core CI box; sims are fast, so these are
// generous ceilings, not expectations.
export const CALL_TIMEOUT_MS = 120_000;

const tempDirs = [];
process.on("exit", () => {
  for (const d of tempDirs) rmSync(d, { recursive: true, force: true });
});

/** A fresh, empty state directory, removed when the process exits. */
export function freshStateDir(tag = "state") {
  const d = mkdtempSync(join(tmpdir(), `massgen-e2e-${tag}-`));
  tempDirs.push(d);
  return d;
}

export function assertBinary() {
  assert.ok(existsSync(BIN), `binary ${BIN} is missing: run \`make build\` (or e2e/run.sh)`);
}

/** The stdio server command for a fresh state dir. */
export function stdioCommand(stateDir = freshStateDir("stdio")) {
  return { command: BIN, args: ["serve", "--state-dir", stateDir], stateDir };
}

export async function freePort() {
  return new Promise((res, rej) => {
    const s = createServer();
    s.unref();
    s.on("error", rej);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => res(port));
    });
  });
}

// START_TIMEOUT_MS bounds a wait for a process to be ready (a server
// answering /healthz, the fakes printing their exports): on CI's loaded
// 2-core box, beside the race builds, a start can take far longer than the
// 15 s these waits had, and nothing measures it. A process that exits first
// fails the wait at once, so the bound costs a failing start nothing.
export const START_TIMEOUT_MS = 90_000;

/**
 * Waits until ready() holds for proc, a process just spawned; throws at once
 * if proc exits first, or after ms. what names it; log() is its output so
 * far, for the error.
 */
export async function awaitStart(what, proc, ready, log, ms = START_TIMEOUT_MS) {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await ready()) return;
    if (proc.exitCode !== null || proc.signalCode !== null) {
      throw new Error(`${what} exited (${proc.exitCode ?? proc.signalCode}) before it was ready:\n${log()}`);
    }
    if (Date.now() > deadline) throw new Error(`${what} was not ready within ${ms} ms:\n${log()}`);
    await sleep(100);
  }
}

/** Whether the server at base answers /healthz with 200. */
export async function healthy(base) {
  try {
    return (await fetch(`${base}/healthz`)).ok;
  } catch {
    return false; // not up yet
  }
}

/**
 * The HTTP endpoint under test. Uses MASSGEN_E2E_URL when run.sh started the
 * server; otherwise starts `serve --http` on a free loopback port with a fresh
 * state dir. Returns {url, stop}.
 */
export async function httpServer() {
  if (process.env.MASSGEN_E2E_URL) return { url: process.env.MASSGEN_E2E_URL, stop: async () => {}, own: false };
  assertBinary();
  const stateDir = freshStateDir("http");
  const port = await freePort();
  const log = [];
  const proc = spawn(BIN, ["serve", "--http", `127.0.0.1:${port}`, "--state-dir", stateDir], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  proc.stdout.on("data", (b) => log.push(b.toString()));
  proc.stderr.on("data", (b) => log.push(b.toString()));
  const base = `http://127.0.0.1:${port}`;
  await awaitStart(`the server at ${base}`, proc, () => healthy(base), () => log.join(""));
  return {
    url: `${base}/mcp`,
    own: true,
    log,
    stop: async () => {
      if (proc.exitCode !== null) return;
      proc.kill("SIGTERM");
      await Promise.race([new Promise((r) => proc.once("exit", r)), sleep(5000)]);
      if (proc.exitCode === null) proc.kill("SIGKILL");
    },
  };
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const UNKNOWN_TOKEN = /unknown (progress )?token/i;

/**
 * Watches everything the SDK might report: the client's onerror, and
 * console.error/console.warn (some SDK paths log instead of calling onerror).
 */
function watchErrors(client) {
  const errors = [];
  client.onerror = (e) => errors.push(e instanceof Error ? e.message : String(e));
  return errors;
}

let consoleHooked = false;
export const consoleErrors = [];
function hookConsole() {
  if (consoleHooked) return;
  consoleHooked = true;
  for (const level of ["error", "warn"]) {
    const orig = console[level].bind(console);
    console[level] = (...args) => {
      consoleErrors.push(args.map((a) => (a instanceof Error ? a.message : String(a))).join(" "));
      orig(...args);
    };
  }
}

/** Records every message the client's transport delivers, in arrival order. */
function recordMessages(transport) {
  const messages = [];
  const orig = transport.onmessage;
  assert.equal(typeof orig, "function", "transport.onmessage not set after connect");
  transport.onmessage = (msg, extra) => {
    messages.push({ at: performance.now(), msg });
    return orig.call(transport, msg, extra);
  };
  return messages;
}

/**
 * Connects a client.
 *   sdk: "v1" (@modelcontextprotocol/sdk 1.32, initialize handshake) or
 *        "v2" (@modelcontextprotocol/client, with versionNegotiation)
 *   kind: "stdio" | "http"
 *   url: the HTTP endpoint (kind http)
 *   v2: extra v2 ClientOptions (e.g. versionNegotiation); connectOptions: passed to connect()
 *   onElicit: answers elicitation (params → {action, content}); the client then declares it
 */
export async function connect({ sdk = "v1", kind, url, v2 = {}, connectOptions, onElicit } = {}) {
  hookConsole();
  const info = { name: `massgen-e2e-${sdk}-${kind}`, version: "0.0.0" };
  let client, transport, stderr = [], stateDir;
  // onElicit(params) answers the server's questions: the client then
  // declares elicitation (form mode), as a client with a user would.
  const capabilities = onElicit ? { elicitation: { form: {} } } : {};
  if (sdk === "v1") {
    client = new V1Client(info, { capabilities });
    if (onElicit) client.setRequestHandler(V1ElicitRequestSchema, async (req) => onElicit(req.params));
  } else {
    client = new V2Client(info, { versionNegotiation: { mode: "auto" }, capabilities, ...v2 });
    if (onElicit) client.setRequestHandler("elicitation/create", async (req) => onElicit(req.params));
  }
  const errors = watchErrors(client);
  const consoleFrom = consoleErrors.length;
  if (kind === "stdio") {
    assertBinary();
    const cmd = stdioCommand();
    stateDir = cmd.stateDir;
    const Stdio = sdk === "v1" ? V1Stdio : V2Stdio;
    transport = new Stdio({ command: cmd.command, args: cmd.args, stderr: "pipe" });
    transport.stderr?.on("data", (b) => stderr.push(b.toString()));
  } else {
    assert.ok(url, "http connect needs a url");
    const Http = sdk === "v1" ? V1HTTP : V2HTTP;
    transport = new Http(new URL(url));
  }
  await client.connect(transport, connectOptions);
  const messages = recordMessages(transport);
  return {
    client,
    transport,
    errors,
    messages,
    stderr,
    stateDir,
    sdk,
    kind,
    consoleFrom,
    async close() {
      try {
        await client.close();
      } catch {
        /* already closed */
      }
    },
  };
}

/**
 * Calls a tool and returns {result, data}: data is structuredContent, which
 * must be an object, with a text rendering beside it. Fails with the tool's
 * own message when it answers isError (unless allowError).
 */
export async function callTool(conn, name, args, { onprogress, allowError = false, timeout = CALL_TIMEOUT_MS } = {}) {
  const params = { name, arguments: args };
  const opts = { timeout, resetTimeoutOnProgress: true, maxTotalTimeout: 10 * CALL_TIMEOUT_MS };
  if (onprogress) opts.onprogress = onprogress;
  const result =
    conn.sdk === "v1" ? await conn.client.callTool(params, undefined, opts) : await conn.client.callTool(params, opts);
  if (result.isError) {
    if (allowError) return { result, data: result.structuredContent, error: textOf(result) };
    assert.fail(`${name}(${JSON.stringify(args)}) returned isError: ${textOf(result)}${serverLog(conn)}`);
  }
  const data = result.structuredContent;
  assert.ok(
    data && typeof data === "object" && !Array.isArray(data),
    `${name}: structuredContent must be an object, got ${JSON.stringify(data)} (content: ${textOf(result)})`,
  );
  assert.ok(
    Array.isArray(result.content) && result.content.some((c) => c.type === "text" && c.text.length > 0),
    `${name}: result has no text rendering beside structuredContent`,
  );
  return { result, data };
}

export function textOf(result) {
  return (result?.content || [])
    .filter((c) => c.type === "text")
    .map((c) => c.text)
    .join("\n");
}

export function serverLog(conn) {
  const s = conn?.stderr?.join("") || "";
  return s ? `\n--- server stderr ---\n${s.slice(-4000)}` : "";
}

/** Every error the SDK or the console reported that mentions an unknown progress token. */
export function unknownTokenErrors(conn) {
  return [...conn.errors, ...consoleErrors.slice(conn.consoleFrom)].filter((e) => UNKNOWN_TOKEN.test(e));
}

/** A client-chosen session id (DESIGN.md §2: ^[A-Za-z0-9_-]{1,64}$). */
export function sessionID(tag) {
  return `e2e_${tag}_${Date.now().toString(36)}_${Math.random().toString(16).slice(2, 10)}`;
}

/** Asserts a finished team result (DESIGN.md §5). */
export function assertFinished(res, what = "result") {
  assert.equal(res.status, "finished", `${what}: status ${res.status} (stop_reason ${res.stop_reason}); ${JSON.stringify(res).slice(0, 2000)}`);
  assert.ok(res.session_id, `${what}: no session_id`);
  assert.ok(res.winner && typeof res.winner === "object", `${what}: no winner: ${JSON.stringify(res.winner)}`);
  assert.ok(res.winner.agent_id, `${what}: winner without agent_id: ${JSON.stringify(res.winner)}`);
  assert.equal(typeof res.final_answer, "string", `${what}: final_answer is not a string`);
  assert.ok(res.final_answer.trim().length > 0, `${what}: empty final_answer`);
  assert.ok(res.stop_reason, `${what}: no stop_reason`);
  assert.ok(res.how_chosen, `${what}: no how_chosen`);
  assert.ok(Array.isArray(res.answers) && res.answers.length > 0, `${what}: no answers`);
  assert.ok(res.consensus && typeof res.consensus === "object", `${what}: no consensus`);
}

/**
 * run_team with sim agents and a progress token. Asserts that every
 * notifications/progress for the call arrived before its result, that the SDK
 * reported no unknown-token error, and that the result is finished.
 */
export async function runTeamWithProgress(conn, t) {
  const progress = [];
  const started = performance.now();
  const { data } = await callTool(
    conn,
    "run_team",
    {
      task: "What is 17 * 23?",
      models: ["sim/strong:latency=40ms", "sim/strong:latency=40ms", "sim:latency=40ms"],
      wait: true,
    },
    { onprogress: (p) => progress.push({ at: performance.now(), p }) },
  );
  const resultAt = performance.now();
  // A trailing notification would arrive after the result: give it time to.
  await sleep(750);

  assertFinished(data, "run_team");
  assert.ok(progress.length > 0, `no progress notification reached onprogress during run_team${serverLog(conn)}`);

  // The wire order: find the response to our tools/call and every progress
  // notification (any token) the transport delivered.
  const msgs = conn.messages;
  const respIdx = msgs.findIndex(
    (m) => m.msg.id !== undefined && m.msg.result && m.msg.result.structuredContent?.session_id === data.session_id,
  );
  assert.ok(respIdx >= 0, "the run_team response was not seen on the transport");
  const token = msgs[respIdx].msg.id; // the SDKs use the request id as progress token
  const notes = msgs
    .map((m, i) => ({ i, m: m.msg }))
    .filter(({ m }) => m.method === "notifications/progress" && String(m.params?.progressToken) === String(token));
  const late = notes.filter(({ i }) => i > respIdx);
  assert.deepEqual(
    late.map(({ m }) => m.params),
    [],
    `${late.length} progress notification(s) arrived on the transport after the run_team result`,
  );
  // Both SDKs dispatch a notification on a microtask but settle a response
  // synchronously: a notification that reaches the client in the same read as
  // the response (written back to back) is handled after the request is gone,
  // and the SDK reports "unknown token" (Claude Code drops stdio on that).
  const unknown = unknownTokenErrors(conn);
  assert.deepEqual(
    unknown,
    [],
    "the client reported unknown-progress-token errors: the notification was on the wire before the result " +
      "but too close to it (same read), so the SDK handled the result first; on stdio the server must hold the " +
      "result until the client answers its ping (mcp/clientsync.go), elsewhere leave a gap (research A.9)",
  );
  assert.equal(
    notes.length,
    progress.length,
    `every progress notification on the wire must reach onprogress: wire ${JSON.stringify(notes.map(({ m }) => m.params.progress))}, onprogress ${JSON.stringify(progress.map((x) => x.p.progress))}; client errors: ${JSON.stringify(conn.errors)}`,
  );
  // MCP (2025-11-25 and 2026-07-28, utilities/progress): "The progress value
  // MUST increase with each notification". Checked in arrival order at the client.
  const values = progress.map((x) => x.p.progress);
  for (let i = 1; i < values.length; i++) {
    assert.ok(
      values[i] > values[i - 1],
      `progress values reached the client out of order (MCP: progress MUST increase with each notification): ${JSON.stringify(values)}` +
        (conn.kind === "http" && conn.client.getProtocolEra?.() !== "modern"
          ? ". Legacy-era HTTP: the client holds a standalone GET SSE stream; if the server lets that stream carry " +
            "notifications of a request, they race the request's own POST stream."
          : ""),
    );
  }
  t?.diagnostic(
    `${conn.sdk}/${conn.kind}: ${progress.length} progress notifications, all before the result; ` +
      `${Math.round(resultAt - started)} ms; winner ${data.winner.agent_id} (${data.how_chosen})`,
  );
  return data;
}

/**
 * Drives a 3-agent team with one host agent to a finished result with
 * start_team + step: the host asks for its view, then submits with the view's
 * seen_steps; sim agents are stepped whenever they are in next_agents.
 */
export async function driveHostTeam(conn, t) {
  const { data: started } = await callTool(conn, "start_team", {
    task: "What is 17 * 23?",
    models: ["host", "sim/strong", "sim/strong"],
  });
  assert.ok(started.session_id, `start_team: no session_id: ${JSON.stringify(started)}`);
  assert.ok(Array.isArray(started.agents) && started.agents.length === 3, `start_team: agents ${JSON.stringify(started.agents)}`);
  for (const a of started.agents) {
    assert.ok(a.id && a.backend && a.model, `start_team: agent needs {id, backend, model}: ${JSON.stringify(a)}`);
  }
  assert.ok(Array.isArray(started.next_agents), `start_team: next_agents ${JSON.stringify(started.next_agents)}`);
  assert.ok(started.rules && typeof started.rules === "object", "start_team: no rules");
  const hosts = started.agents.filter((a) => a.backend === "host");
  assert.equal(hosts.length, 1, `exactly one agent must have backend host: ${JSON.stringify(started.agents)}`);
  const host = hosts[0].id;
  const sid = started.session_id;

  let next = started.next_agents;
  let final = null;
  let hostAnswered = false;
  let views = 0;
  let steps = 0;
  for (let iter = 0; iter < 60 && !final; iter++) {
    if (next.length === 0) {
      // Nothing to step: the session must be over (or decided) — ask.
      const { data: st } = await callTool(conn, "team_status", { session_id: sid });
      assert.ok(st.result, `team_status has no result object: ${JSON.stringify(st).slice(0, 800)}`);
      const res = st.result;
      assert.ok(["finished", "decided"].includes(res.status), `next_agents empty but session is ${res.status}: ${JSON.stringify(st).slice(0, 1500)}`);
      final = res;
      break;
    }
    const agent = next[0];
    let r;
    if (agent === host) {
      const { data: view } = await callTool(conn, "step", { session_id: sid, agent_id: host });
      views++;
      assert.equal(view.action, "view", `a host step without action must return a view: ${JSON.stringify(view).slice(0, 800)}`);
      assert.ok(view.view, `view result has no view: ${JSON.stringify(view).slice(0, 800)}`);
      const { prompt, actions, vote_enum } = view.view;
      assert.equal(typeof prompt, "string");
      assert.ok(prompt.includes("17"), "the host's prompt must carry the task");
      assert.ok(Array.isArray(actions) && actions.length > 0, `view.actions ${JSON.stringify(actions)}`);
      assert.ok(Array.isArray(vote_enum), `view.vote_enum ${JSON.stringify(vote_enum)}`);
      assert.ok(view.seen_steps && typeof view.seen_steps === "object", `view has no seen_steps: ${JSON.stringify(view).slice(0, 800)}`);
      if (views === 1) {
        // DESIGN.md §2: a submission without the view's seen_steps is refused (isError, with the fix).
        const bad = await callTool(conn, "step", { session_id: sid, agent_id: host, action: actions[0], content: "391", target: vote_enum[0], reason: "x" }, { allowError: true });
        assert.ok(bad.error !== undefined, `a host submission without seen_steps must be refused: ${String(JSON.stringify(bad.result)).slice(0, 500)}`);
        assert.match(bad.error, /seen_steps/, "the refusal should name seen_steps");
      }
      let submit;
      if (actions.includes("new_answer") && !hostAnswered) {
        submit = { action: "new_answer", content: "17 * 23 = 391.\nAnswer: 391" };
        hostAnswered = true;
      } else {
        assert.ok(actions.includes("vote") && vote_enum.length > 0, `host can neither answer nor vote: ${JSON.stringify(view.view)}`);
        submit = { action: "vote", target: vote_enum[0], reason: "e2e host: 391 is correct" };
      }
      ({ data: r } = await callTool(conn, "step", { session_id: sid, agent_id: host, seen_steps: view.seen_steps, ...submit }));
      assert.equal(r.action, submit.action, `host submission landed as ${r.action}: ${JSON.stringify(r).slice(0, 800)}`);
    } else {
      ({ data: r } = await callTool(conn, "step", { session_id: sid, agent_id: agent }));
      assert.ok(["new_answer", "vote", "error"].includes(r.action), `sim step action ${r.action}`);
    }
    steps++;
    assert.equal(r.session_id, sid);
    assert.ok(Array.isArray(r.next_agents), `step result without next_agents: ${JSON.stringify(r).slice(0, 800)}`);
    if (r.finished) {
      assert.ok(r.result, `finished step without result: ${JSON.stringify(r).slice(0, 800)}`);
      final = r.result;
    }
    next = r.next_agents;
  }
  assert.ok(final, `the team did not finish within 60 steps`);
  assertFinished(final, "step-driven team");
  assert.ok(hostAnswered && views >= 2, `the host must answer and then vote (views ${views})`);
  const { data: status } = await callTool(conn, "team_status", { session_id: sid });
  assert.ok(status.result, `team_status has no result object: ${JSON.stringify(status).slice(0, 800)}`);
  assert.equal(status.result.status, "finished", `team_status after the finishing step: ${JSON.stringify(status).slice(0, 800)}`);
  assert.ok(Array.isArray(status.agents) && status.agents.length === 3, "team_status: agents table");
  t?.diagnostic(`${conn.sdk}/${conn.kind}: host team finished in ${steps} steps (${views} host views); winner ${final.winner.agent_id}`);
  return final;
}

/**
 * team_status must answer while a blocking run_team (slow sims, wait: true)
 * is in flight on the same connection.
 */
export async function statusDuringRun(conn, t) {
  const sid = sessionID("status");
  let runDone = null;
  const run = callTool(conn, "run_team", {
    task: "What is 17 * 23?",
    models: ["sim/strong:latency=300ms", "sim/strong:latency=300ms", "sim:latency=300ms"],
    wait: true,
    session_id: sid,
  }, { onprogress: () => {} }).then((r) => {
    runDone = performance.now();
    return r;
  });
  run.catch(() => {});
  // Poll until the session exists; the first answer must come while run_team blocks.
  let status = null, statusAt = null, tries = 0, lastErr = "";
  while (runDone === null && tries < 200) {
    tries++;
    const { data, error } = await callTool(conn, "team_status", { session_id: sid }, { allowError: true, timeout: 20_000 });
    if (!error) {
      status = data;
      statusAt = performance.now();
      break;
    }
    lastErr = error;
    await sleep(25);
  }
  const { data: final } = await run;
  assert.ok(status, `team_status never answered before run_team returned (${tries} tries; last error: ${lastErr})`);
  assert.ok(statusAt < runDone, "team_status answered only after run_team returned");
  assert.ok(status.result, `team_status has no result object: ${JSON.stringify(status).slice(0, 800)}`);
  assert.equal(status.result.session_id, sid);
  assert.equal(status.result.status, "running", `team_status during the run: status ${status.result.status}`);
  assertFinished(final, "blocking run_team");
  assert.equal(final.session_id, sid);
  t?.diagnostic(`${conn.sdk}/${conn.kind}: team_status answered ${Math.round(runDone - statusAt)} ms before run_team returned (${tries} polls)`);
}

/** tools/list has every tool of DESIGN.md §5, each with an object input schema. */
export async function assertTools(conn) {
  const { tools } = await conn.client.listTools();
  const names = tools.map((t) => t.name);
  for (const want of TOOLS) assert.ok(names.includes(want), `tools/list lacks ${want}: ${names.join(", ")}`);
  for (const tool of tools) assert.equal(tool.inputSchema?.type, "object", `${tool.name}: inputSchema.type`);
  return tools;
}
