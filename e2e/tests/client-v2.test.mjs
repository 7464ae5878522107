// The v2 client (@modelcontextprotocol/client) with versionNegotiation
// {mode: "auto"}, in both protocol eras, over stdio and streamable HTTP:
//   modern  2026-07-28, stateless: server/discover, per-request _meta
//   legacy  2025-11-25, the initialize handshake. Against a dual-era server
//           'auto' always picks the modern era, so the legacy run hands
//           connect() a cached legacy verdict (ConnectOptions.prior, which
//           takes precedence over versionNegotiation): the same client, the
//           same options, the 2025 wire.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";

import { connect, httpServer, assertTools, runTeamWithProgress, driveHostTeam } from "../lib/harness.mjs";

const ERAS = {
  modern: { version: "2026-07-28" },
  legacy: { version: "2025-11-25", connectOptions: { prior: { kind: "legacy" } } },
};

for (const kind of ["stdio", "http"]) {
  for (const [era, spec] of Object.entries(ERAS)) {
    describe(`client v2 (versionNegotiation auto) over ${kind}, ${era} era ${spec.version}`, { timeout: 300_000 }, () => {
      let srv;
      before(async () => {
        if (kind === "http") srv = await httpServer();
      });
      after(async () => {
        await srv?.stop();
      });
      const open = () =>
        connect({
          sdk: "v2",
          kind,
          url: srv?.url,
          v2: { versionNegotiation: { mode: "auto" } },
          connectOptions: spec.connectOptions,
        });

      it(`negotiates ${spec.version} and lists the tools`, async (t) => {
        const c = await open();
        try {
          assert.equal(c.client.getNegotiatedProtocolVersion(), spec.version);
          assert.equal(c.client.getProtocolEra(), era);
          await assertTools(c);
          t.diagnostic(`negotiated ${c.client.getNegotiatedProtocolVersion()} (${c.client.getProtocolEra()}); server ${JSON.stringify(c.client.getServerVersion())}`);
        } finally {
          await c.close();
        }
      });

      it("run_team with sim agents: progress before the result, a finished team", async (t) => {
        const c = await open();
        try {
          await runTeamWithProgress(c, t);
        } finally {
          await c.close();
        }
      });

      it("start_team + step drive a host team to a finished result", async (t) => {
        const c = await open();
        try {
          await driveHostTeam(c, t);
        } finally {
          await c.close();
        }
      });
    });
  }
}
