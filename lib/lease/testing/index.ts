/**
 * `@leasewatch/lease/testing`: isolation for tests against real servers (a fresh Postgres
 * schema or Redis key namespace per test) and checks of a finished run's history. Free of
 * any test runner, so Playwright and vitest can both load it; the store contract suite,
 * which needs vitest, is `@leasewatch/lease/testing/contract`.
 */
export {
  TEST_DATABASE_URL,
  TEST_REDIS_URL,
  freshPgSchema,
  freshRedisNamespace,
  sleep,
  untilDayHasLeft,
  createRandom,
  type FreshPgSchema,
  type FreshRedisNamespace,
} from "./isolation";
export * from "./history-checks";
export { writePastEvents } from "./redis-past-events";
