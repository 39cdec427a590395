import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { respondWithServerError } from "@/lib/auth/server-error";
import { runInBackgroundRun } from "./context";
import { createLogger, getLogger, readLogLevel } from "./logger";
import { installRequestIds } from "./request-id";
import { captureLogs, type CapturedLogs } from "./testing";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe("the server log", () => {
  it("writes one JSON object per line with level, time, service and message", () => {
    let output = "";
    const logger = createLogger("console", { level: "info", destination: { write: (line: string) => void (output += line) } });
    logger.info({ store: "pg-main" }, "sweep works again");
    logger.debug("not at info");
    const lines = output.split("\n").filter(Boolean);
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: "info", service: "console", store: "pg-main", msg: "sweep works again", time: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) });
  });

  it("takes its level from LOG_LEVEL, and names a value that is not a level", () => {
    expect(readLogLevel({})).toEqual({ level: "info", problem: null });
    expect(readLogLevel({ LOG_LEVEL: "DEBUG" })).toEqual({ level: "debug", problem: null });
    expect(readLogLevel({ LOG_LEVEL: "verbose" })).toEqual({ level: "info", problem: expect.stringMatching(/^LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent/) });
  });

  it("redacts credentials wherever a line carries them", () => {
    const logs = captureLogs();
    try {
      getLogger("test").warn(
        {
          req: { method: "GET", url: "/api/leases", headers: { authorization: "Bearer secret-bearer-1", cookie: "next-auth.session-token=secret-cookie-2", "x-leasewatch-peer": "secret-stamp-3 127.0.0.1", accept: "text/html" } },
          session: { accessToken: "secret-access-4", idToken: "secret-id-5", refreshToken: "secret-refresh-6" },
          idp: { clientSecret: "secret-client-7" },
        },
        "a line with secrets in it",
      );
      const text = logs.text();
      for (const secret of ["secret-bearer-1", "secret-cookie-2", "secret-stamp-3", "secret-access-4", "secret-id-5", "secret-refresh-6", "secret-client-7"]) expect(text).not.toContain(secret);
      expect(logs.lines[0]).toMatchObject({ req: { headers: { authorization: "[redacted]", cookie: "[redacted]", accept: "text/html" } }, session: { accessToken: "[redacted]" } });
    } finally {
      logs.restore();
    }
  });

  it("gives each background run its own runId", async () => {
    const logs = captureLogs();
    try {
      await runInBackgroundRun(async () => {
        getLogger("sweep").info("first");
        await new Promise((resolve) => setTimeout(resolve, 1));
        getLogger("sweep").info("second, after an await");
      });
      await runInBackgroundRun(async () => getLogger("sweep").info("another run"));
      const [first, second, other] = logs.lines;
      expect(first!.runId).toMatch(UUID);
      expect(second!.runId).toBe(first!.runId);
      expect(other!.runId).toMatch(UUID);
      expect(other!.runId).not.toBe(first!.runId);
    } finally {
      logs.restore();
    }
  });
});

/**
 * The console's request ids, on a real HTTP server: installRequestIds() (as instrumentation.ts
 * installs it) and a handler that fails the way route handlers do (respondWithServerError).
 */
describe("console request ids", () => {
  let server: http.Server;
  let port: number;
  let logs: CapturedLogs;

  beforeAll(async () => {
    installRequestIds();
    logs = captureLogs("console");
    server = http.createServer((req, res) => {
      // Like a route handler: read the body, await something, then fail and answer with a reference.
      let body = "";
      req.on("data", (chunk: Buffer) => (body += chunk.toString()));
      req.on("end", async () => {
        await new Promise((resolve) => setTimeout(resolve, 5));
        const answer = respondWithServerError(new Error(`the store refused ${body.length} bytes`), "the console could not read the store");
        res.writeHead(answer.status, { "content-type": "application/json" });
        res.end(await answer.text());
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    logs?.restore();
    await new Promise((resolve) => server?.close(resolve));
  });

  async function send(agent: http.Agent, headers: Record<string, string>): Promise<{ reqId: string; correlationId: string }> {
    return new Promise((resolve, reject) => {
      const req = http.request({ host: "127.0.0.1", port, method: "POST", path: "/api/leases", agent, headers }, (res) => {
        let text = "";
        res.on("data", (chunk: Buffer) => (text += chunk.toString()));
        res.on("end", () => resolve({ reqId: String(res.headers["x-request-id"]), correlationId: (JSON.parse(text) as { correlationId: string }).correlationId }));
      });
      req.on("error", reject);
      req.end("{}");
    });
  }

  it("puts the request's id on its lines and in the answer's x-request-id; a bearer token and a cookie stay out of the log", async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const credentials = { authorization: "Bearer console-secret-bearer", cookie: "next-auth.session-token=console-secret-cookie" };
      // Three requests on one kept-alive connection, one after the other: each gets its own id.
      const answers = [
        await send(agent, { ...credentials, "x-request-id": "lb-7f3a" }),
        await send(agent, { ...credentials, "x-request-id": "not a plain token; <script>" }),
        await send(agent, credentials),
      ];
      expect(answers[0]!.reqId).toBe("lb-7f3a");
      expect(answers[1]!.reqId).toMatch(UUID);
      expect(answers[2]!.reqId).toMatch(UUID);
      expect(new Set(answers.map((a) => a.reqId)).size).toBe(3);
      for (const answer of answers) {
        const line = logs.lines.find((l) => l.correlationId === answer.correlationId);
        expect(line).toMatchObject({ level: "error", service: "console", reqId: answer.reqId, msg: "the console could not read the store", err: { message: "the store refused 2 bytes" } });
      }
      expect(logs.text()).not.toContain("console-secret-bearer");
      expect(logs.text()).not.toContain("console-secret-cookie");
    } finally {
      agent.destroy();
    }
  });
});
