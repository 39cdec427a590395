import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApiServer } from "@/lib/api/server";
import { loggerOptions } from "@/lib/log/logger";
import { startApiFixture, type ApiFixture } from "@/test/support/api-server";

/** The lock API's log, with the options it runs with in production (lib/log/logger.ts), read back as JSON lines. */
describe("the lock API's log", () => {
  let api: ApiFixture;
  let token: string;
  beforeAll(async () => {
    api = await startApiFixture();
    token = await api.createToken({ prefixes: ["logs:"] });
  });
  afterAll(async () => {
    await api?.close();
  });

  it("logs a failed request with its id and headers, but never the bearer token or the cookie", async () => {
    let output = "";
    const app = buildApiServer({
      stores: new Map([[api.pg.spec.name, api.pg.store]]),
      tokens: api.tokens,
      handleKey: api.handleKey,
      logger: { ...loggerOptions("api", "debug"), stream: { write: (line: string) => void (output += line) } },
    });
    const cookie = "next-auth.session-token=cookie-secret-4c1d; theme=dark";
    try {
      // A valid token on a request that fails (another tenant's prefix), and a made-up one.
      const outside = await app.inject({ method: "GET", url: "/v1/locks?prefix=other:", headers: { authorization: `Bearer ${token}`, cookie, "x-request-id": "req-outside", "user-agent": "billing-worker/1.2" } });
      expect(outside.statusCode).toBeGreaterThanOrEqual(400);
      const madeUp = await app.inject({ method: "GET", url: "/v1/locks", headers: { authorization: "Bearer lwk_made-up-secret-9f2e", cookie, "x-request-id": "req-made-up" } });
      expect(madeUp.statusCode).toBe(401);
    } finally {
      await app.close();
    }
    const lines = output.split("\n").filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
    const failed = lines.filter((l) => l.msg === "request failed");
    expect(failed.map((l) => l.reqId)).toEqual(["req-outside", "req-made-up"]);
    expect(failed[0]).toMatchObject({ service: "api", level: "info", headers: { authorization: "[redacted]", cookie: "[redacted]", "user-agent": "billing-worker/1.2" } });
    expect(output).not.toContain(token);
    expect(output).not.toContain("lwk_made-up-secret-9f2e");
    expect(output).not.toContain("cookie-secret-4c1d");
  });
});
