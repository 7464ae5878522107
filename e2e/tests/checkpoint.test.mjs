// checkpoint (issue 5) through the official TypeScript SDK v1 against the
// built binary, over stdio and streamable HTTP, with offline sim reviewers:
// the verdicts proceed, revise and refuse, verify mode with a draft plan,
// progress before the result, and team_status on the review session.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";

import { connect, httpServer, callTool, sessionID, sleep, serverLog } from "../lib/harness.mjs";

const REVIEWERS = ["sim/strong:latency=30ms", "sim:latency=30ms", "sim:latency=30ms"];
const KINDS = ["verify", "action", "backup", "notify", "wait"];
const OUTCOMES = ["proceed", "recheckpoint", "refuse", "halt"];

/** Checks a plan against the plan schema of DESIGN.md §2, as a caller relies on it. */
function assertPlan(plan, what) {
  assert.ok(Array.isArray(plan), `${what}: plan is not a list: ${JSON.stringify(plan)}`);
  plan.forEach((st, i) => {
    const where = `${what}: step ${i + 1} ${JSON.stringify(st)}`;
    assert.equal(st.step, i + 1, `${where}: numbered out of order`);
    assert.ok(KINDS.includes(st.kind), `${where}: kind`);
    assert.ok(st.description?.length > 0, `${where}: description`);
    for (const p of st.preconditions) assert.ok(p >= 1 && p < st.step, `${where}: precondition ${p} is not an earlier step`);
    assert.ok(st.recovery.length > 0 && OUTCOMES.includes(st.recovery.at(-1)), `${where}: recovery must end in an outcome`);
    if (st.kind === "action") {
      assert.ok(st.approved_call?.tool, `${where}: an action needs an approved_call`);
      assert.ok(!!st.rollback !== !!st.rollback_none_reason, `${where}: an action needs a rollback or a reason, not both`);
    }
  });
}

function assertVerdict(data, verdict, what) {
  assert.equal(data.status, "finished", `${what}: status ${data.status}: ${JSON.stringify(data).slice(0, 1500)}`);
  assert.equal(data.verdict, verdict, `${what}: verdict ${data.verdict}, concerns ${JSON.stringify(data.concerns)}`);
  assert.ok(data.session_id, `${what}: no session_id`);
  assert.ok(data.winner?.agent_id && data.winner.label, `${what}: winner ${JSON.stringify(data.winner)}`);
  assert.equal(data.concerns.length, REVIEWERS.length, `${what}: every reviewer's concerns: ${JSON.stringify(data.concerns)}`);
  assert.equal(data.votes.length, REVIEWERS.length, `${what}: every reviewer's vote: ${JSON.stringify(data.votes)}`);
  assert.equal(typeof data.final_answer, "string", `${what}: final_answer`);
  assert.match(data.final_answer, new RegExp(`Verdict: ${verdict}`), `${what}: the final answer is the winning review`);
  assertPlan(data.plan, what);
}

for (const kind of ["stdio", "http"]) {
  describe(`checkpoint with sdk v1 over ${kind}`, { timeout: 300_000 }, () => {
    let srv;
    before(async () => {
      if (kind === "http") srv = await httpServer();
    });
    after(async () => {
      await srv?.stop();
    });
    const open = () => connect({ sdk: "v1", kind, url: srv?.url });

    it("is listed with its input schema, its result's shape and honest annotations", async () => {
      const c = await open();
      try {
        const { tools } = await c.client.listTools();
        const tool = tools.find((t) => t.name === "checkpoint");
        assert.ok(tool, `tools/list lacks checkpoint: ${tools.map((t) => t.name).join(", ")}`);
        assert.equal(tool.inputSchema.type, "object");
        assert.ok(tool.inputSchema.properties.objective && tool.inputSchema.properties.draft_plan && tool.inputSchema.properties.safety_policy);
        // No output schema (every conversation pays for tools/list): the
        // description says the result's shape; hints left out are the spec's
        // defaults (not read-only, open world).
        assert.equal(tool.outputSchema, undefined);
        assert.match(tool.description, /Returns \{session_id, status, verdict, plan, concerns, votes\}/);
        assert.equal(tool.annotations?.destructiveHint, false);
        assert.notEqual(tool.annotations?.readOnlyHint, true);
        assert.notEqual(tool.annotations?.openWorldHint, false);
      } finally {
        await c.close();
      }
    });

    it("an irreversible production change without a backup: revise, progress first, team_status on the session", async (t) => {
      const c = await open();
      try {
        const progress = [];
        const sid = sessionID("ckpt");
        const { data } = await callTool(
          c,
          "checkpoint",
          {
            objective: "Drop the legacy_orders table from the production database.",
            action_goals: [{ id: "drop", goal: "drop legacy_orders", preferred_tools: ["psql"] }],
            models: REVIEWERS,
            session_id: sid,
          },
          { onprogress: (p) => progress.push({ at: performance.now(), p }) },
        );
        const resultAt = performance.now();
        await sleep(500); // a trailing notification would arrive now
        assertVerdict(data, "revise", "checkpoint");
        assert.equal(data.session_id, sid);
        assert.ok(data.plan.some((s) => s.kind === "backup"), `the plan adds a backup: ${JSON.stringify(data.plan)}`);
        const action = data.plan.find((s) => s.kind === "action");
        assert.equal(action.goal_id, "drop");
        assert.equal(action.approved_call.tool, "psql");
        assert.ok(data.concerns.every((r) => r.concerns.some((x) => /no backup/.test(x))), JSON.stringify(data.concerns));
        assert.ok(progress.length > 0, `no progress reached onprogress${serverLog(c)}`);
        assert.ok(progress.every((x) => x.at <= resultAt), "a progress notification arrived after the result");

        const { data: st } = await callTool(c, "team_status", { session_id: sid });
        assert.equal(st.result?.status, "finished", `team_status on the checkpoint session: ${JSON.stringify(st).slice(0, 800)}`);
        assert.equal(st.result.winner.label, data.winner.label);

        const { data: again } = await callTool(c, "checkpoint", { session_id: sid });
        assert.equal(again.verdict, "revise", "checkpoint{session_id} reads the verdict again");
        t.diagnostic(`${kind}: ${data.verdict} by ${data.how_chosen} in ${data.steps} steps; ${progress.length} progress notifications; ${data.plan.length}-step plan`);
      } finally {
        await c.close();
      }
    });

    it("a safe change proceeds; a caller's rule refuses", async () => {
      const c = await open();
      try {
        const { data: ok } = await callTool(c, "checkpoint", { objective: "Fix a typo in the README of my local project.", models: REVIEWERS });
        assertVerdict(ok, "proceed", "safe change");
        const { data: no } = await callTool(c, "checkpoint", {
          objective: "Drop the staging tables after taking a backup.",
          safety_policy: ["Never drop tables."],
          models: REVIEWERS,
        });
        assertVerdict(no, "refuse", "policy hit");
        assert.ok(no.concerns[0].concerns.some((x) => x.includes("Never drop tables.")), JSON.stringify(no.concerns));
      } finally {
        await c.close();
      }
    });

    it("verify mode: a draft with a forward precondition and no backup is corrected", async () => {
      const c = await open();
      try {
        const draft = [
          { step: 1, kind: "verify", description: "Confirm nobody reads legacy_orders.", preconditions: [2], touches: ["shared_db"], recovery: ["halt"] },
          {
            step: 2, kind: "action", description: "Drop legacy_orders.", preconditions: [1], touches: ["prod", "shared_db"], recovery: ["halt"],
            approved_call: { tool: "psql", arguments: { query: "DROP TABLE legacy_orders" } },
            rollback_none_reason: "a dropped table is gone",
          },
        ];
        const { data } = await callTool(c, "checkpoint", {
          objective: "Drop legacy_orders from the production database.",
          draft_plan: draft,
          models: REVIEWERS,
        });
        assertVerdict(data, "revise", "verify mode");
        const all = data.concerns.flatMap((r) => r.concerns).join("\n");
        assert.match(all, /step 1 has precondition 2, a later step/);
        assert.match(all, /no backup step before it/);
        assert.deepEqual(data.plan.map((s) => s.kind), ["verify", "backup", "action"], JSON.stringify(data.plan));
      } finally {
        await c.close();
      }
    });

    it("bad input is an isError result with a fix", async () => {
      const c = await open();
      try {
        const r = await callTool(c, "checkpoint", { objective: " ", models: REVIEWERS }, { allowError: true });
        assert.ok(r.error !== undefined, "an empty objective must be refused");
        assert.match(r.error, /objective is empty/);
        assert.match(r.error, /To fix:/);
      } finally {
        await c.close();
      }
    });
  });
}
