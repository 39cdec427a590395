/**
 * Fixed facts of the browser-test stack, shared by playwright.config.ts, the
 * stack process (e2e-stack.ts) and the specs. Ports differ from the demo's
 * (3000/4400) so both can run at once.
 */
import { randomBytes } from "node:crypto";
import path from "node:path";

/**
 * E2E_PORT_OFFSET shifts every port, so two checkouts on one machine can run
 * their browser tests at the same time without meeting each other's servers.
 */
const PORT_OFFSET = Number(process.env.E2E_PORT_OFFSET ?? 0);
export const CONSOLE_PORT = 3100 + PORT_OFFSET;
export const OIDC_PORT = 4410 + PORT_OFFSET;
/** Loopback-only control endpoint of the e2e stack (stop/start the Redis store). */
export const CONTROL_PORT = 3199 + PORT_OFFSET;
export const BASE_URL = `http://127.0.0.1:${CONSOLE_PORT}`;
export const ISSUER_URL = `http://127.0.0.1:${OIDC_PORT}`;
export const CONTROL_URL = `http://127.0.0.1:${CONTROL_PORT}`;

/**
 * The console's NEXTAUTH_SECRET in the e2e stack. Set once per run in Playwright's main
 * process (it loads this file first) and inherited by the stack and the test workers,
 * so a spec can craft a session cookie the way an attacker holding the secret could.
 */
export const E2E_NEXTAUTH_SECRET = (process.env.E2E_NEXTAUTH_SECRET ||= randomBytes(32).toString("base64url"));

/** Store names in the e2e stack: pg-main (shared Postgres, own schema) and redis-main (a throwaway redis-server). */
export const PG_STORE = "pg-main";
export const REDIS_STORE = "redis-main";

/** What GET <control>/facts answers: the stack's stores (as test/support/stores.ts specs) and its audit log. */
export interface StackFacts {
  stores: Array<
    | { kind: "postgres"; name: string; url: string; schema: string }
    | { kind: "redis"; name: string; url: string; namespace: string }
  >;
  audit: { url: string; schema: string };
}

/** Signed-in browser states written by the setup project (under test-results/, which is not committed). */
export const AUTH_DIR = path.join(__dirname, "..", "..", "test-results", ".auth");
export const OPERATOR_STATE = path.join(AUTH_DIR, "alice-operator.json");
export const VIEWER_STATE = path.join(AUTH_DIR, "bob-viewer.json");

/**
 * Chromium's headless shell, from Debian; Playwright does not download its own browser here.
 * The same engine as the full browser without its UI: the browser tests take about a third
 * less CPU and time in it than in `/usr/bin/chromium --headless` (docs/testing.md).
 */
export const CHROMIUM_PATH = "/usr/bin/chromium-headless-shell";
export const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
  "--disable-quic",
];
