/**
 * A loopback TCP proxy a test controls, for faults a real server cannot be asked
 * to produce: a command that ran on the server but whose reply never reached the
 * client (the connection dropped in between).
 */
import net from "node:net";

export interface TcpProxy {
  readonly port: number;
  readonly url: string;
  /**
   * Arms the proxy: the next reply bytes from the server are thrown away and that
   * connection is cut on both sides. Resolves when it happened. `reconnectDelayMs`: a
   * connection made within that long after the cut gets no bytes through until it has passed
   * (a slow reconnect).
   */
  dropNextReply(options?: { reconnectDelayMs?: number }): Promise<void>;
  /** Connections accepted so far (a reconnect adds one). */
  readonly connections: number;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host?: string; port: number }, scheme = "redis"): Promise<TcpProxy> {
  const sockets = new Set<net.Socket>();
  let connections = 0;
  let armed: (() => void) | null = null;
  let reconnectDelayMs = 0;
  /** Until when (Date.now()) a new connection is held back. */
  let heldUntil = 0;

  const server = net.createServer((downstream) => {
    connections += 1;
    const upstream = net.connect({ host: target.host ?? "127.0.0.1", port: target.port });
    sockets.add(downstream);
    sockets.add(upstream);
    const cut = () => {
      downstream.destroy();
      upstream.destroy();
    };
    downstream.on("close", () => sockets.delete(downstream));
    upstream.on("close", () => sockets.delete(upstream));
    downstream.on("error", cut);
    upstream.on("error", cut);
    downstream.on("end", cut);
    upstream.on("end", cut);
    downstream.on("data", (chunk: Buffer) => upstream.write(chunk));
    const holdMs = heldUntil - Date.now();
    if (holdMs > 0) {
      downstream.pause();
      setTimeout(() => downstream.resume(), holdMs);
    }
    upstream.on("data", (chunk: Buffer) => {
      if (armed) {
        const done = armed;
        armed = null;
        heldUntil = Date.now() + reconnectDelayMs;
        cut();
        done();
        return;
      }
      downstream.write(chunk);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const address = server.address();
  if (typeof address !== "object" || !address) throw new Error("proxy has no port");
  const port = address.port;

  return {
    port,
    url: `${scheme}://127.0.0.1:${port}`,
    get connections() {
      return connections;
    },
    dropNextReply: (options) =>
      new Promise<void>((resolve) => {
        reconnectDelayMs = options?.reconnectDelayMs ?? 0;
        armed = resolve;
      }),
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
