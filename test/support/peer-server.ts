/**
 * A real HTTP server that hands each request to a console edge function as the
 * route handler would see it (a web Request, the peer stamped by
 * installPeerStamp()), and a client that connects from a chosen loopback
 * address (127.0.0.0/8 is all local on Linux), so tests see real socket addresses.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { installPeerStamp } from "@/lib/console/shared/request-address";

export interface PeerServer {
  /** Sends a GET from `from` (e.g. 127.0.0.2) with these headers; answers status, headers and body text. */
  get(from: string, headers?: Record<string, string>): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>;
  close(): Promise<void>;
}

export async function startPeerServer(handle: (request: Request) => Promise<Response>): Promise<PeerServer> {
  installPeerStamp();
  const server = http.createServer((req, res) => {
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) if (typeof value === "string") headers.set(name, value);
    handle(new Request(`http://${req.headers.host ?? "localhost"}${req.url ?? "/"}`, { headers }))
      .then(async (response) => {
        res.writeHead(response.status, Object.fromEntries(response.headers));
        res.end(await response.text());
      })
      .catch((error: unknown) => {
        res.writeHead(500);
        res.end(String(error));
      });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    get: (from, headers = {}) =>
      new Promise((resolve, reject) => {
        const req = http.request({ host: "127.0.0.1", port, path: "/", method: "GET", localAddress: from, headers, agent: false }, (res) => {
          let body = "";
          res.setEncoding("utf8");
          res.on("data", (chunk: string) => (body += chunk));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
        });
        req.on("error", reject);
        req.end();
      }),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
