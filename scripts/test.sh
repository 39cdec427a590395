#!/usr/bin/env bash
# `npm test`: every check, against real PostgreSQL, Redis and Chromium.
set -euo pipefail
cd "$(dirname "$0")/.."
step() { printf '\n=== %s ===\n' "$*"; }

step "services"; bash scripts/ensure-services.sh
step "typecheck"; npx tsc --noEmit
step "lint"; npx eslint --max-warnings 0 .
if command -v promtool >/dev/null; then
  step "alert rules (promtool)"; promtool check rules ops/alerts.yml; promtool test rules ops/alerts.test.yml
else
  step "alert rules: SKIPPED, promtool is not installed (Debian: apt-get install prometheus)"
fi
step "library and read-model tests (vitest)"; npx vitest run
if [ -d e2e ] && ls e2e/*.spec.ts >/dev/null 2>&1; then
  step "production build"; npx next build
  step "browser tests (playwright)"; npx playwright test
fi
