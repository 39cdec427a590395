import { defineConfig } from "@playwright/test";
import { BASE_URL, CHROMIUM_ARGS, CHROMIUM_PATH, OPERATOR_STATE, VIEWER_STATE } from "./e2e/support/harness";

/**
 * Browser tests against the production build, a real IdP and real stores
 * (see e2e/support/e2e-stack.ts). Works alone (`npx playwright test`): the stack
 * builds the console first when the build is missing or stale.
 *
 * Projects: `setup` signs alice and bob in through the IdP's login form and
 * waits until the workload has written every kind of event the specs read;
 * `operator` (alice) runs every spec except tests tagged @viewer, which run in
 * `viewer` (bob), and tests tagged @store-outage, which stop or pause the Redis
 * store and so run in `store-outage` (alice) once the others have finished: a
 * test running beside them would lose the keys it wrote, or hang on its reads.
 * Tests that need no session use an empty storageState.
 *
 * Time budgets, in one place: a test gets TEST_TIMEOUT_MS for its page loads,
 * at most one wait for live data on a page (DATA_TIMEOUT_MS in the specs, well
 * inside it) and an axe scan, on a loaded 2-core machine. The wait for the
 * workload's first data is the setup project's, with its own budget.
 */
export default defineConfig({
  testDir: "e2e",
  outputDir: "test-results",
  timeout: 60_000,
  expect: { timeout: 10_000 },
  fullyParallel: false,
  workers: 2,
  retries: 0,
  forbidOnly: !!process.env.CI,
  reporter: [["list"]],
  use: {
    baseURL: BASE_URL,
    viewport: { width: 1280, height: 800 },
    launchOptions: { executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS },
    trace: "retain-on-failure",
    screenshot: "only-on-failure",
  },
  projects: [
    { name: "setup", testMatch: /support\/(auth|data)\.setup\.ts$/ },
    { name: "operator", dependencies: ["setup"], grepInvert: /@viewer|@store-outage/, use: { storageState: OPERATOR_STATE } },
    { name: "viewer", dependencies: ["setup"], grep: /@viewer/, use: { storageState: VIEWER_STATE } },
    { name: "store-outage", dependencies: ["operator", "viewer"], grep: /@store-outage/, use: { storageState: OPERATOR_STATE } },
  ],
  webServer: {
    command: "node_modules/.bin/tsx e2e/support/e2e-stack.ts",
    url: `${BASE_URL}/signin`,
    // Includes a production build when none is current.
    timeout: 240_000,
    reuseExistingServer: false,
    stdout: "pipe",
    stderr: "pipe",
    gracefulShutdown: { signal: "SIGTERM", timeout: 15_000 },
  },
});
