// The official TypeScript SDK v1 (@modelcontextprotocol/sdk 1.32, the
// 2025-11-25 initialize handshake) against the built binary, over stdio and
// over streamable HTTP. Every stdio connection spawns its own server with a
// fresh state dir.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";

import {
  connect,
  httpServer,
  assertTools,
  runTeamWithProgress,
  driveHostTeam,
  statusDuringRun,
  callTool,
} from "../lib/harness.mjs";

for (const kind of ["stdio", "http"]) {
  describe(`sdk v1 over ${kind}`, { timeout: 300_000 }, () => {
    let srv;
    before(async () => {
      if (kind === "http") srv = await httpServer();
    });
    after(async () => {
      await srv?.stop();
    });
    const open = () => connect({ sdk: "v1", kind, url: srv?.url });

    it("lists the tools of DESIGN.md §5 and reports the negotiated version", async (t) => {
      const c = await open();
      try {
        const v = c.client.getServerVersion();
        assert.ok(v?.name, "initialize result has no serverInfo.name");
        await assertTools(c);
        const { data } = await callTool(c, "list_backends", {});
        assert.ok(data && typeof data === "object");
        t.diagnostic(`server ${v.name} ${v.version}`);
      } finally {
        await c.close();
      }
    });

    it("run_team with sim agents: every progress notification precedes the result", async (t) => {
      const c = await open();
      try {
        await runTeamWithProgress(c, t);
      } finally {
        await c.close();
      }
    });

    it("start_team + step drive a team with one host agent to a finished result", async (t) => {
      const c = await open();
      try {
        await driveHostTeam(c, t);
      } finally {
        await c.close();
      }
    });

    it("team_status answers while a blocking run_team is in flight", async (t) => {
      const c = await open();
      try {
        await statusDuringRun(c, t);
      } finally {
        await c.close();
      }
    });
  });
}
