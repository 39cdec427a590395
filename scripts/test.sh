#!/usr/bin/env bash
# `npm test`: every check, against real PostgreSQL, Redis and Chromium.
set -euo pipefail
cd "$(dirname "$0")/.."
step() { printf '\n=== %s ===\n' "$*"; }

step "services"; bash scripts/ensure-services.sh
step "typecheck"; npx tsc --noEmit
step "package: publint and attw on the packed @leasewatch/lease"; npm run check:package
# The command tests run the built `leasewatch` bin, as a user gets it (check:package has just built it).
export LEASEWATCH_BIN="$PWD/packages/lease/bin/leasewatch.js"
step "lint"; npx eslint --max-warnings 0 .
step "import rules (dependency-cruiser)"; npm run --silent check:imports
if command -v promtool >/dev/null; then
  step "alert rules (promtool)"; promtool check rules ops/alerts.yml; promtool test rules ops/alerts.test.yml
else
  step "alert rules: SKIPPED, promtool is not installed (Debian: apt-get install prometheus)"
fi
step "library and read-model tests (vitest)"; npx vitest run
# The tests that seed by time again, with every clock (tests, PostgreSQL, Redis) moved to 23:58:30 UTC
# on the last day of this month: the run crosses midnight and the month, where an hour-dependent test breaks.
step "time-seeded tests at the end of a month (npm run test:clock -- month-end)"; node --import tsx scripts/test-at.ts month-end
step "production install on a clean copy (npm ci, build, prune --omit=dev, every service starts with node)"; bash scripts/test-production-install.sh
if [ -d e2e ] && ls e2e/*.spec.ts >/dev/null 2>&1; then
  step "production build"; npx next build
  step "browser tests (playwright)"; npx playwright test
fi
