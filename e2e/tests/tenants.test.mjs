// Closed to anyone not allowed in (issue 13), with the official TypeScript SDK
// v1 against the built binary over streamable HTTP: two tenants from a
// --tokens-file side by side, a client-named base URL pointing at a loopback
// sink that must receive nothing, an operator-only field refused, and a
// 50 MB body refused with 413.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createServer } from "node:http";
import { writeFileSync } from "node:fs";
import { join } from "node:path";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

import { BIN, assertBinary, awaitStart, freePort, freshStateDir, healthy, sleep, textOf } from "../lib/harness.mjs";

const ALICE = "dummy.alice.e2e.token.not.a.secret";
const BOB = "dummy.bob.e2e.token.not.a.secret";
const KEY = "sk-dummy-e2e-operator-not-a-key-0000";

describe("tenants, base URLs and limits over http", { timeout: 180_000 }, () => {
  let proc, base, sink, sinkHits = 0, sinkKeys = 0;
  const log = [];

  before(async () => {
    assertBinary();
    sink = createServer((req, res) => {
      sinkHits++;
      if (JSON.stringify(req.headers).includes(KEY)) sinkKeys++;
      res.writeHead(418).end();
    });
    await new Promise((r) => sink.listen(0, "127.0.0.1", r));
    const state = freshStateDir("tenants");
    const tokens = join(freshStateDir("tokens"), "tokens");
    writeFileSync(tokens, `# e2e tenants\nalice ${ALICE}\nbob ${BOB}\n`);
    const port = await freePort();
    proc = spawn(BIN, ["serve", "--http", `127.0.0.1:${port}`, "--state-dir", state, "--tokens-file", tokens], {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, OPENAI_API_KEY: KEY, ANTHROPIC_API_KEY: KEY, MASSGEN_MCP_TOKEN: "" },
    });
    proc.stderr.on("data", (b) => log.push(b.toString()));
    base = `http://127.0.0.1:${port}`;
    await awaitStart("the server", proc, () => healthy(base), () => log.join(""));
  });
  after(async () => {
    proc?.kill("SIGTERM");
    await Promise.race([new Promise((r) => proc.once("exit", r)), sleep(5000)]);
    sink?.close();
  });

  async function as(token) {
    const client = new Client({ name: "massgen-e2e-tenant", version: "0.0.0" }, { capabilities: {} });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }),
    );
    return client;
  }

  it("keeps each tenant's sessions its own: another tenant sees session not found", async () => {
    const alice = await as(ALICE);
    const bob = await as(BOB);
    try {
      const started = await alice.callTool({ name: "start_team", arguments: { task: "What is 2+2?", models: ["sim", "sim", "host"] } });
      assert.ok(!started.isError, textOf(started));
      const id = started.structuredContent.session_id;
      for (const [name, args] of [
        ["team_status", { session_id: id }],
        ["step", { session_id: id, agent_id: "agent_a" }],
        ["finalize_team", { session_id: id }],
        ["cancel_team", { session_id: id }],
      ]) {
        const res = await bob.callTool({ name, arguments: args });
        assert.ok(res.isError, `${name}: bob reached alice's session: ${textOf(res)}`);
        assert.match(textOf(res), /not found/i, `${name}: ${textOf(res)}`);
        assert.doesNotMatch(textOf(res), /forbidden/i);
      }
      await assert.rejects(bob.readResource({ uri: `massgen://sessions/${id}/status` }), /not found/i);
      const list = await bob.readResource({ uri: "massgen://sessions" });
      assert.ok(!list.contents[0].text.includes(id), "bob's listing shows alice's session");
      const mine = await alice.callTool({ name: "team_status", arguments: { session_id: id, format: "json" } });
      assert.ok(!mine.isError, textOf(mine));
    } finally {
      await alice.close();
      await bob.close();
    }
  });

  it("never calls a base URL the operator did not allow, so the key goes nowhere", async () => {
    const alice = await as(ALICE);
    try {
      const url = `http://127.0.0.1:${sink.address().port}/v1`;
      for (const models of [[`openai/gpt-5.4@${url}`, "sim"], [`claude/claude-opus-4-6@${url}`, "sim"]]) {
        const res = await alice.callTool({ name: "run_team", arguments: { task: "x", models, wait: false } });
        assert.ok(res.isError, `accepted ${models[0]}`);
        assert.match(textOf(res), /--allow-base-url/);
      }
      assert.equal(sinkHits, 0, "the sink was called");
      assert.equal(sinkKeys, 0, "the sink got the key");
    } finally {
      await alice.close();
    }
  });

  it("refuses an operator-only field with the fix", async () => {
    const alice = await as(ALICE);
    try {
      const res = await alice.callTool({ name: "run_team", arguments: { task: "x", models: ["sim", "sim"], mcp_servers: { fs: {} } } });
      assert.ok(res.isError);
      assert.match(textOf(res), /put it in a team file under --teams-dir and name the team/);
    } finally {
      await alice.close();
    }
  });

  it("refuses a 50 MB body with 413 and echoes none of it", async () => {
    const body = Buffer.alloc(50 << 20, "a");
    body.write('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"run_team","arguments":{"task":"');
    let res;
    try {
      res = await fetch(`${base}/mcp`, {
        method: "POST",
        body,
        headers: { Authorization: `Bearer ${ALICE}`, "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
      });
    } catch (e) {
      // The server may close the connection while the client still sends.
      assert.match(String(e?.cause?.code ?? e), /EPIPE|ECONNRESET|UND_ERR_SOCKET/, String(e));
      return;
    }
    assert.equal(res.status, 413);
    const text = await res.text();
    assert.ok(text.length < 1000 && text.includes("--max-body") && !text.includes("aaaa"), text.slice(0, 300));
  });

  it("refuses a token from nowhere", async () => {
    const res = await fetch(`${base}/mcp`, {
      method: "POST",
      body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
      headers: { Authorization: "Bearer dummy.wrong.token.not.a.secret", "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
    });
    assert.equal(res.status, 401);
  });
});
