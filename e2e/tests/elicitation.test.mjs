// Asking the user through the client (issue 29, item 4), with the official
// TypeScript SDKs against the built binary: checkpoint{confirm: true} and a
// human agent in run_team, answered, declined and cancelled.
//
// The v1 SDK speaks 2025-11-25: the server asks it with elicitation/create
// (mcp-go bridges the tool's input_required result). The v2 client speaks
// 2026-07-28: it receives the input_required result and calls again with the
// answers. Over HTTP a 2025-11-25 client cannot be asked (the server keeps no
// HTTP sessions, so it never sees the capability declared at initialize):
// that refusal is tested too.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";

import { connect, httpServer, callTool, serverLog } from "../lib/harness.mjs";

const REVIEWERS = ["sim/strong:latency=20ms", "sim:latency=20ms", "sim:latency=20ms"];
const SAFE = "Fix a typo in the README of my local project.";

/** A user who replies with one action, keeping every question. */
function userWho(action) {
  const asked = [];
  return {
    asked,
    onElicit: async (params) => {
      asked.push(params);
      return action === "accept" ? { action, content: {} } : { action };
    },
  };
}

/** A person in a team: an answer when asked for one, else a vote for the first choice. */
function teamMember(answer) {
  const asked = [];
  return {
    asked,
    onElicit: async (params) => {
      asked.push(params);
      const vote = params.requestedSchema.properties.vote;
      if (vote) return { action: "accept", content: { vote: vote.enum[0], reason: "it is right" } };
      return { action: "accept", content: { answer } };
    },
  };
}

const combos = [
  { sdk: "v1", kind: "stdio" },
  { sdk: "v2", kind: "stdio" },
  { sdk: "v2", kind: "http" },
];

for (const { sdk, kind } of combos) {
  describe(`asking the user with sdk ${sdk} over ${kind}`, { timeout: 300_000 }, () => {
    let srv;
    before(async () => {
      if (kind === "http") srv = await httpServer();
    });
    after(async () => {
      await srv?.stop();
    });
    const open = (onElicit) => connect({ sdk, kind, url: srv?.url, onElicit });

    for (const action of ["accept", "decline", "cancel"]) {
      it(`checkpoint{confirm: true}: the user's ${action} is in the result`, async () => {
        const u = userWho(action);
        const c = await open(u.onElicit);
        try {
          const { data, result } = await callTool(c, "checkpoint", { objective: SAFE, models: REVIEWERS, confirm: true });
          assert.equal(data.verdict, "proceed", `verdict: ${JSON.stringify(data).slice(0, 800)}`);
          assert.equal(data.confirmation, action, `confirmation: ${JSON.stringify(data).slice(0, 800)}${serverLog(c)}`);
          assert.equal(u.asked.length, 1, `asked once: ${JSON.stringify(u.asked)}`);
          assert.match(u.asked[0].message, /Fix a typo/);
          assert.deepEqual(u.asked[0].requestedSchema.properties, {});
          // Each era is asked its own way: 2025-11-25 with elicitation/create
          // from the server, 2026-07-28 with an input_required result.
          const created = c.messages.some((m) => m.msg.method === "elicitation/create");
          const inputRequired = c.messages.some((m) => m.msg.result?.resultType === "input_required");
          assert.deepEqual({ created, inputRequired }, sdk === "v1" ? { created: true, inputRequired: false } : { created: false, inputRequired: true });
          const text = result.content.map((x) => x.text).join("\n");
          assert.match(text, action === "accept" ? /The user confirmed/ : action === "decline" ? /The user declined/ : /The user cancelled/);
        } finally {
          await c.close();
        }
      });
    }

    it("a human agent answers, then votes from the aliases offered as an enum", async () => {
      const u = teamMember("391");
      const c = await open(u.onElicit);
      try {
        const { data } = await callTool(c, "run_team", {
          task: "What is 17 * 23?",
          agents: [
            { id: "me", model: "human" },
            { id: "bot_a", model: "sim/strong:latency=20ms" },
            { id: "bot_b", model: "sim/strong:latency=20ms" },
          ],
          wait: true,
          detail: "full", // answers whole, to read the person's own
        });
        assert.equal(data.status, "finished", JSON.stringify(data).slice(0, 1500));
        assert.ok(u.asked.length >= 2, `asked for an answer and a vote: ${u.asked.length}`);
        assert.deepEqual(u.asked[0].requestedSchema.required, ["answer"]);
        assert.match(u.asked[0].message, /17 \* 23/);
        const votes = u.asked.filter((q) => q.requestedSchema.properties.vote);
        assert.ok(votes.length > 0, "offered a vote");
        assert.deepEqual([...votes[0].requestedSchema.properties.vote.enum].sort(), ["agent1", "agent2", "agent3"]);
        const mine = data.answers.find((a) => a.agent_id === "me");
        assert.ok(mine && mine.content.includes("391"), `the person's answer: ${JSON.stringify(data.answers)}`);
      } finally {
        await c.close();
      }
    });

    it("a human agent who declines is dropped and the models finish", async () => {
      const u = userWho("decline");
      const c = await open(u.onElicit);
      try {
        const { data } = await callTool(c, "run_team", {
          task: "What is 17 * 23?",
          agents: [
            { id: "me", model: "human" },
            { id: "bot_a", model: "sim/strong:latency=20ms" },
            { id: "bot_b", model: "sim/strong:latency=20ms" },
          ],
          wait: true,
        });
        assert.equal(data.status, "finished");
        assert.notEqual(data.winner.agent_id, "me");
        assert.equal(u.asked.length, 2, "asked max_agent_failures times");
      } finally {
        await c.close();
      }
    });

    it("a client that declares no elicitation is refused before anything runs", async () => {
      const c = await open(undefined);
      try {
        const ck = await callTool(c, "checkpoint", { objective: SAFE, models: REVIEWERS, confirm: true }, { allowError: true });
        assert.ok(ck.error, "confirm without elicitation is an error");
        assert.match(ck.error, /cannot ask its user/);
        assert.match(ck.error, /elicitation/);
        const rt = await callTool(c, "run_team", { task: "What is 17 * 23?", models: ["human", "sim/strong"] }, { allowError: true });
        assert.ok(rt.error, "a human agent without elicitation is an error");
        assert.match(rt.error, /human agents \(human\)/);
        assert.match(rt.error, /elicitation/);
      } finally {
        await c.close();
      }
    });
  });
}

describe("asking the user with sdk v1 over http", { timeout: 120_000 }, () => {
  let srv;
  before(async () => {
    srv = await httpServer();
  });
  after(async () => {
    await srv?.stop();
  });

  it("is refused, saying why and what works instead", async () => {
    const u = userWho("accept");
    const c = await connect({ sdk: "v1", kind: "http", url: srv.url, onElicit: u.onElicit });
    try {
      const r = await callTool(c, "checkpoint", { objective: SAFE, models: REVIEWERS, confirm: true }, { allowError: true });
      assert.ok(r.error, "a 2025-11-25 client over HTTP cannot be seen to declare elicitation");
      assert.match(r.error, /keeps no HTTP sessions/);
      assert.match(r.error, /2026-07-28/);
      assert.equal(u.asked.length, 0);
    } finally {
      await c.close();
    }
  });
});
