import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requestMeta } from "@/lib/console/shared/audited-request";
import { recordRefusedAttempt, type RequestMeta } from "@/lib/audit/force-release";
import { listAuditEntries } from "@/lib/audit/read";
import { ALICE, auditDeps, createAuditFixture, type AuditFixture } from "@/test/support/audit";
import { startPeerServer, type PeerServer } from "@/test/support/peer-server";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** A refused force-release audited from a real request; answers its audit entry. */
describe("where an audited request came from", () => {
  let audit: AuditFixture;
  let server: PeerServer;
  let proxied: PeerServer;
  let n = 0;

  const handler = (env: Record<string, string | undefined>) => async (request: Request) => {
    const meta: RequestMeta = requestMeta(request, env);
    const resource = `from-${++n}`;
    await recordRefusedAttempt({ actor: ALICE, request: meta, store: "pg-main", resource, leaseId: "lease-1", reason: "checking the address", outcome: "denied_role" }, auditDeps(audit.log, {}));
    const [entry] = (await listAuditEntries({ resource, limit: 1 }, audit.log)).items;
    return Response.json({ ip: entry?.ip ?? null, requestId: entry?.requestId ?? null });
  };

  beforeAll(async () => {
    audit = await createAuditFixture();
    server = await startPeerServer(handler({}));
    proxied = await startPeerServer(handler({ TRUSTED_PROXY: "127.0.0.4" }));
  });
  afterAll(async () => {
    await server?.close();
    await proxied?.close();
    await audit?.cleanup();
  });

  it("records the socket's address and a request id of its own, whatever the client claims", async () => {
    const answer = await server.get("127.0.0.2", { "x-forwarded-for": "198.51.100.9", "x-real-ip": "198.51.100.10", "x-request-id": "req-chosen-by-client" });
    const entry = JSON.parse(answer.body) as { ip: string; requestId: string };
    expect(entry.ip).toBe("127.0.0.2");
    expect(entry.requestId).toMatch(UUID);
  });

  it("records the forwarded client and the proxy when the request came through a TRUSTED_PROXY", async () => {
    const through = JSON.parse((await proxied.get("127.0.0.4", { "x-forwarded-for": "198.51.100.1, 203.0.113.8" })).body) as { ip: string };
    expect(through.ip).toBe("203.0.113.8 via 127.0.0.4");
    // The same header from anywhere else is not believed.
    const around = JSON.parse((await proxied.get("127.0.0.5", { "x-forwarded-for": "203.0.113.8" })).body) as { ip: string };
    expect(around.ip).toBe("127.0.0.5");
  });
});
